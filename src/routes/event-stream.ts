/**
 * @module routes/event-stream
 * Writes a Server-Sent Events answer (a streamed reply of `/api/chat` or `/v1`): the 200
 * with its headers (with the first event, or `OPENING_HOLD_MS` after the stream began if
 * the core is slower), then events as they come, and a `: ping` comment whenever
 * nothing else was written for `pingMs`, so proxies and clients do not take a slow core for
 * a dead connection.
 *
 * The events are written straight to Node's response (the reply is hijacked: Fastify writes
 * nothing more), not piped through a stream: a PassThrough and Fastify's stream sending
 * made a good part of a streamed reply's garbage. The
 * headers Fastify's hooks set (`x-request-id`, `cache-control`, ...) are sent with the
 * status. The request's `onResponse` hooks still run when the answer has finished (Fastify
 * listens for it from the start), so its log line and metrics come as for any answer, or
 * the `client_closed` line when the client left first.
 *
 * The first event of the reply leaves at once, with the status, the headers and the opening
 * held for it. After it, events written in one turn of the event loop leave in one socket
 * write: the answer is corked at the first of them and uncorked in the same turn's check
 * phase (`setImmediate`). An upstream often sends several chunks, or its last tokens and
 * its end, in one packet; written one by one they cost a syscall and a wake-up of the
 * client each (the deltas, the `done` event and the chunked body's end were three writes).
 * The first event is not held until that check phase: that would add to its time to first
 * token whatever the rest of the turn did (reading the rest of such a packet, ending the turn).
 *
 * Backpressure (docs/contract.md, "Streamed replies"): once the socket holds its high-water
 * mark of unsent bytes, `ready()` gives a promise that the turn awaits before it takes the
 * next piece from the core, so a client that reads slowly slows the upstream down instead of
 * filling plauder's memory. A long event (`done`, which repeats the reply) is written piece
 * by piece, each after the client has read the one before (`sendPieces`). While plauder
 * waits for the client, a client that takes nothing of what is waiting for `stallMs` is cut
 * off (its socket destroyed): the turn then ends as a hang-up. One that still reads, however
 * slowly, is not: what counts is progress, not the time since the wait began.
 */
import type { FastifyReply } from 'fastify';

export interface EventStream {
  /**
   * `event: <name>` (when named) and `data: <data>`; `data` must hold no line break. It
   * leaves at the end of this turn of the event loop, with whatever was held before it.
   */
  send(data: string, name?: string): void;
  /**
   * An event whose data is `pieces` joined (no line break in any), written piece by piece,
   * each once the client has read what came before; settles once the last is written or the
   * client has gone.
   */
  sendPieces(name: string, pieces: Iterable<string>): Promise<void>;
  /**
   * An event that opens the stream and may wait for the first `send` (at most
   * `OPENING_HOLD_MS`), e.g. `/v1`'s role chunk: it then leaves in the same packet. Named
   * like `send` when `name` is given (Anthropic's `message_start`).
   */
  open(data: string, name?: string): void;
  /** Ends the answer; nothing is written after it. */
  end(): void;
  /** True once ended, or once the client has gone. */
  readonly closed: boolean;
  /**
   * Undefined while the socket takes more; else a promise that settles when the client has
   * read what was held (the socket drained) or has gone. The next piece waits for it.
   */
  ready(): Promise<void> | undefined;
}

/** At least every 15 s (docs/contract.md, "Streamed replies"); tests pass a shorter interval. */
export const DEFAULT_PING_MS = 15_000;

/**
 * How long the status, the headers and the opening events wait for the first event of the
 * reply, so that a core that answers at once sends them in one packet with it: one socket
 * write and one wake-up of the client less per stream. A
 * core that thinks longer has them sent after this long, so a client always sees its 200
 * within a few milliseconds.
 */
const OPENING_HOLD_MS = 20;

/** How long a client may read nothing of a stream that waits for it before it is cut off. */
const DEFAULT_STALL_MS = 30_000;

/** A long event's pieces are written once they add up to this many characters. */
const PIECE_WRITE_CHARS = 16 * 1024;

/** How often a stream that waits for its client looks whether the client took anything. */
const STALL_CHECK_MS = 1_000;

export function openEventStream(
  reply: FastifyReply,
  headers: Readonly<Record<string, string>>,
  pingMs: number,
  stallMs: number = DEFAULT_STALL_MS,
): EventStream {
  return new SseWriter(reply, headers, pingMs, stallMs);
}

/** A class, not an object literal with a getter: see test/house/object-literals.test.ts. */
class SseWriter implements EventStream {
  private readonly raw: FastifyReply['raw'];
  private readonly ping: NodeJS.Timeout;
  private isClosed = false;
  /** The response is corked, and an uncork is scheduled (the hold's end or `setImmediate`). */
  private corked = false;
  /** The opening's hold, until the first event or its timer ends it. */
  private hold: NodeJS.Timeout | undefined;
  /** The first event (of the reply, not the opening) has been sent. */
  private sentFirst = false;
  /** While the socket is full: the promise `ready()` gives, its settling, the stall watch. */
  private waiting: { promise: Promise<void>; settle: () => void; stall: StallWatch } | undefined;
  /** A long event is being written: no ping may come between its pieces. */
  private inEvent = false;

  constructor(
    reply: FastifyReply,
    headers: Readonly<Record<string, string>>,
    pingMs: number,
    private readonly stallMs: number,
  ) {
    this.raw = reply.raw;
    // A full socket needs no ping: the client has data it has not read yet.
    this.ping = setInterval(() => {
      if (!this.raw.writableNeedDrain && !this.inEvent) this.write(': ping\n\n');
    }, pingMs);
    this.ping.unref();
    this.raw.once('close', () => this.close());
    const head: Record<string, string | number | string[]> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if (value !== undefined) head[name] = value;
    }
    for (const [name, value] of Object.entries(headers)) head[name] = value;
    head['content-type'] = 'text/event-stream; charset=utf-8';
    // nginx would otherwise buffer the stream until it ends.
    head['x-accel-buffering'] = 'no';
    reply.hijack();
    this.raw.writeHead(200, head);
    // The status, the headers and the opening wait (corked) for the first event, or until
    // the hold ends, whichever comes first.
    this.raw.cork();
    this.corked = true;
    this.hold = setTimeout(this.uncork, OPENING_HOLD_MS);
    this.raw.write(': stream\n\n');
  }

  get closed(): boolean {
    return this.isClosed;
  }

  ready(): Promise<void> | undefined {
    if (this.isClosed || !this.raw.writableNeedDrain) return undefined;
    if (this.waiting) return this.waiting.promise;
    let settle: () => void = () => {};
    const promise = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const stall = watchStall(this.raw, this.stallMs);
    this.waiting = { promise, settle, stall };
    this.raw.once('drain', this.drained);
    return promise;
  }

  private readonly drained = () => {
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = undefined;
    waiting.stall.stop();
    this.raw.off('drain', this.drained);
    waiting.settle();
  };

  send(data: string, name?: string): void {
    this.write(name === undefined ? `data: ${data}\n\n` : `event: ${name}\ndata: ${data}\n\n`);
    this.sent();
  }

  async sendPieces(name: string, pieces: Iterable<string>): Promise<void> {
    this.inEvent = true;
    try {
      // Small pieces are joined: each write is a chunk of its own on the wire.
      let pending = `event: ${name}\ndata: `;
      for (const piece of pieces) {
        // The client has gone: the rest of the event is not even made.
        if (this.isClosed) return;
        pending += piece;
        if (pending.length < PIECE_WRITE_CHARS) continue;
        this.write(pending);
        pending = '';
        const waiting = this.ready();
        if (waiting) await waiting;
      }
      this.write(`${pending}\n\n`);
      this.sent();
    } finally {
      this.inEvent = false;
    }
  }

  /** An event was written: the first one leaves at once. */
  private sent(): void {
    // The first event leaves at once, with what was held before it: whatever else this
    // turn of the event loop still does (an upstream that sent its whole answer in one
    // packet is read to its end) would otherwise delay the first token.
    if (this.sentFirst) return;
    this.sentFirst = true;
    clearTimeout(this.hold);
    // An uncork still scheduled for this turn then finds the socket uncorked: a no-op, or
    // it sends what a later write of the same turn corked a little early.
    if (this.corked) this.uncork();
  }

  open(data: string, name?: string): void {
    this.write(name === undefined ? `data: ${data}\n\n` : `event: ${name}\ndata: ${data}\n\n`);
  }

  end(): void {
    if (this.isClosed) return;
    this.close();
    this.raw.end();
    // The last events may still wait for a client that reads nothing: it is cut off too.
    if (!this.raw.writableNeedDrain) return;
    const stall = watchStall(this.raw, this.stallMs);
    const clear = () => stall.stop();
    this.raw.once('finish', clear);
    this.raw.once('close', clear);
  }

  private close(): void {
    this.isClosed = true;
    clearInterval(this.ping);
    clearTimeout(this.hold);
    this.hold = undefined;
    // A turn waiting for the client goes on, to find it gone.
    this.drained();
  }

  private readonly uncork = () => {
    this.corked = false;
    this.hold = undefined;
    this.raw.uncork();
  };

  private write(text: string): void {
    if (this.isClosed) return;
    if (!this.corked) {
      this.corked = true;
      this.raw.cork();
      setImmediate(this.uncork);
    }
    this.raw.write(text);
    this.ping.refresh();
  }
}

interface StallWatch {
  stop(): void;
}

/**
 * Cuts the client off once it has taken nothing of the unsent bytes for `stallMs` (within
 * `STALL_CHECK_MS` after): progress is the unsent bytes going down, in Node's buffer or in
 * libuv's queue below it. The socket is destroyed, not ended: its unsent bytes go with it,
 * and 'close' follows.
 */
function watchStall(raw: FastifyReply['raw'], stallMs: number): StallWatch {
  let last = unsent(raw);
  let lastProgress = performance.now();
  const timer = setInterval(
    () => {
      const now = unsent(raw);
      if (now.buffered < last.buffered || now.queued < last.queued)
        lastProgress = performance.now();
      last = now;
      if (performance.now() - lastProgress >= stallMs) {
        clearInterval(timer);
        raw.destroy();
      }
    },
    Math.min(STALL_CHECK_MS, Math.ceil(stallMs / 4)),
  );
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * The bytes not yet taken by the kernel: those in Node's buffers (they go down when a whole
 * write has left), and those of the write under way in libuv's queue, which go down as the
 * kernel takes part of it (a slow client reading a long event). Node shows the latter only
 * on the socket's handle (`writeQueueSize`, read live from libuv).
 */
function unsent(raw: FastifyReply['raw']): { buffered: number; queued: number } {
  const handle = (raw.socket as { _handle?: { writeQueueSize?: unknown } } | null)?._handle;
  const queued = typeof handle?.writeQueueSize === 'number' ? handle.writeQueueSize : 0;
  return { buffered: raw.writableLength, queued };
}

/** Whether an `Accept` header asks for `text/event-stream`. */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept
    .split(',')
    .some((range) => range.split(';')[0]?.trim().toLowerCase() === 'text/event-stream');
}
