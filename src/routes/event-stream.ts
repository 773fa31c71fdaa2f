/**
 * @module routes/event-stream
 * Writes a Server-Sent Events answer (a streamed reply of `/api/chat` or `/v1`): the 200
 * with its headers at once, then events as they come, and a `: ping` comment whenever
 * nothing else was written for `pingMs`, so proxies and clients do not take a slow core for
 * a dead connection.
 *
 * The events go through Fastify's own stream sending (a PassThrough), so the request's
 * hooks run as for any answer: its log line and metrics once the stream has ended, or the
 * `client_closed` line when the client left first.
 *
 * Events written in one turn of the event loop leave in one socket write: the answer is
 * corked at the first of them and uncorked in the same turn's check phase (`setImmediate`).
 * An upstream often sends several chunks, or its last tokens and its end, in one packet;
 * written one by one they cost a syscall and a wake-up of the client each (the deltas, the
 * `done` event and the chunked body's end were three writes; bench/README.md, "Streaming").
 */
import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

export interface EventStream {
  /** `event: <name>` (when named) and `data: <data>`; `data` must hold no line break. */
  send(data: string, name?: string): void;
  /** Ends the answer; nothing is written after it. */
  end(): void;
  /** True once ended, or once the client has gone. */
  readonly closed: boolean;
}

/** At least every 15 s (contract §9); tests pass a shorter interval. */
export const DEFAULT_PING_MS = 15_000;

export function openEventStream(
  reply: FastifyReply,
  headers: Readonly<Record<string, string>>,
  pingMs: number,
): EventStream {
  const body = new PassThrough();
  const raw = reply.raw;
  let closed = false;
  let corked = false;
  const uncork = () => {
    corked = false;
    raw.uncork();
  };
  const ping = setInterval(() => write(': ping\n\n'), pingMs);
  ping.unref();
  const close = () => {
    closed = true;
    clearInterval(ping);
  };
  reply.raw.once('close', close);
  const write = (text: string) => {
    if (closed) return;
    if (!corked) {
      corked = true;
      raw.cork();
      setImmediate(uncork);
    }
    body.write(text);
    ping.refresh();
  };

  reply
    .code(200)
    .headers(headers)
    .header('content-type', 'text/event-stream; charset=utf-8')
    // nginx would otherwise buffer the stream until it ends.
    .header('x-accel-buffering', 'no')
    .send(body);
  // The status and headers leave now, not with the first event (the core may think a while).
  write(': stream\n\n');

  return {
    send(data, name) {
      write(name === undefined ? `data: ${data}\n\n` : `event: ${name}\ndata: ${data}\n\n`);
    },
    end() {
      if (closed) return;
      close();
      body.end();
    },
    get closed() {
      return closed;
    },
  };
}

/** Whether an `Accept` header asks for `text/event-stream`. */
export function acceptsEventStream(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept
    .split(',')
    .some((range) => range.split(';')[0]?.trim().toLowerCase() === 'text/event-stream');
}
