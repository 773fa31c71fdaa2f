/**
 * @module chat/run-core
 * Calls the core with a deadline and the client's signal, and checks its answer. The core
 * is cancelled (its signal fires) when the deadline passes, the client goes away or the
 * service stops; the result says which, even when the core ignores its signal.
 *
 * Streamed (`onDelta` given): the core's pieces are passed on as they come, with the
 * whitespace at the start and the end of the reply left out (as `reply()`'s answers are
 * trimmed), so the deltas joined are exactly the reply. A core without `stream` is sent as
 * its reply in one delta. Once the turn has ended (deadline, client gone, stopping) no
 * further delta is passed on, whatever the core still does.
 */
import {
  type CoreAdapter,
  CoreError,
  type CoreNotice,
  type CoreRequest,
  type Language,
  type Sampling,
  type TokenUsage,
  type Turn,
} from '../core/core-adapter.js';
import { Cancellation, type CancelSignal } from '../util/cancellation.js';

export type CoreFailureCode = 'internal_error' | 'core_unavailable' | 'core_timeout';

export type CoreResult =
  | { readonly ok: true; readonly reply: string; readonly usage: TokenUsage | undefined }
  | { readonly ok: false; readonly code: CoreFailureCode; readonly cause: unknown }
  | { readonly ok: false; readonly code: 'client_closed' };

export interface CoreLimits {
  /** Aborts when the client has gone away. */
  readonly client: CancelSignal;
  /** Tells when the service stops and in-flight turns may no longer wait. */
  readonly stopping: Stopping;
  readonly timeoutMs: number;
}

/**
 * The service stopping, as every turn waiting for its core hears of it. A list of callbacks
 * rather than an AbortSignal: adding and removing an EventTarget listener on every turn
 * cost more than the rest of this module's bookkeeping.
 */
export interface Stopping {
  readonly stopped: boolean;
  /** Calls `listener` once when the service stops; returns how to stop listening. */
  watch(listener: () => void): () => void;
}

export function createStopping(): Stopping & { stop(): void } {
  return new StoppingSignal();
}

/** One turn's listener, linked to the others while the turn waits. */
interface Watcher {
  listener: (() => void) | undefined;
  newer: Watcher | undefined;
  older: Watcher | undefined;
}

/**
 * The listeners are a doubly linked list of the turns' own nodes, not a `Set`: on Node 20 a
 * long-lived `Set` that every turn adds itself to and deletes itself from kept the deleted
 * turns reachable until the next full collection, so at 50 turns in flight every scavenge
 * promoted 200 KB of finished requests (3 KB with the list; bench/README.md, "What a turn
 * leaves behind").
 */
class StoppingSignal implements Stopping {
  private newest: Watcher | undefined;
  stopped = false;

  watch(listener: () => void): () => void {
    const watcher: Watcher = { listener, newer: undefined, older: this.newest };
    if (this.newest) this.newest.newer = watcher;
    this.newest = watcher;
    return () => this.unlink(watcher);
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    const listeners: Array<() => void> = [];
    let watcher = this.newest;
    this.newest = undefined;
    while (watcher) {
      const { older } = watcher;
      if (watcher.listener) listeners.push(watcher.listener);
      watcher.listener = undefined;
      watcher.newer = undefined;
      watcher.older = undefined;
      watcher = older;
    }
    // Oldest first, as the turns began.
    for (const listener of listeners.reverse()) listener();
  }

  private unlink(watcher: Watcher): void {
    if (watcher.listener === undefined) return;
    watcher.listener = undefined;
    const { newer, older } = watcher;
    if (newer) newer.older = older;
    else if (this.newest === watcher) this.newest = older;
    if (older) older.newer = newer;
    watcher.newer = undefined;
    watcher.older = undefined;
  }
}

export async function runCore(
  core: CoreAdapter,
  request: Omit<CoreRequest, 'signal'>,
  { client, stopping, timeoutMs }: CoreLimits,
  onDelta?: (text: string) => void | Promise<void>,
): Promise<CoreResult> {
  // One promise settled by whichever comes first, the core's answer or a stop (not a
  // Promise.race with a promise that a finished turn never settles).
  let stop: (reason: Asked) => void = () => {};
  const settled = new Promise<Asked>((resolve) => {
    stop = resolve;
  });
  let usage: TokenUsage | undefined;
  const call = new CoreCall(request, (counted) => {
    usage = counted;
  });
  const onClientGone = () => {
    // Settle first, so the race reports the client, not the core's reaction to the abort.
    stop({ ok: false, code: 'client_closed' });
    call.cancel(client.reason);
  };
  const timer = setTimeout(() => {
    const cause = new CoreError('core_timeout', `core did not answer within ${timeoutMs} ms`);
    stop({ ok: false, code: 'core_timeout', cause });
    call.cancel(cause);
  }, timeoutMs);
  const onStopping = () => {
    const cause = new CoreError('core_unavailable', 'the service stopped before the core answered');
    stop({ ok: false, code: 'core_unavailable', cause });
    call.cancel(cause);
  };
  client.addEventListener('abort', onClientGone, { once: true });
  const unwatch = stopping.watch(onStopping);
  if (client.aborted) onClientGone();
  else if (stopping.stopped) onStopping();
  try {
    (onDelta ? askStreamed(core, call, onDelta) : ask(core, call)).then(stop);
    const result = await settled;
    return result.ok ? { ok: true, reply: result.reply, usage } : result;
  } finally {
    clearTimeout(timer);
    client.removeEventListener('abort', onClientGone);
    unwatch();
  }
}

/** What a turn hands the core, before its signal and usage callback are added. */
type TurnCoreRequest = Omit<CoreRequest, 'signal'>;

/** The core's answer before the usage it reported is added. */
type Asked = Exclude<CoreResult, { ok: true }> | { readonly ok: true; readonly reply: string };

async function ask(core: CoreAdapter, call: CoreCall): Promise<Asked> {
  try {
    const reply = await core.reply(call);
    if (typeof reply !== 'string' || reply.trim().length === 0) return emptyReply();
    return { ok: true, reply };
  } catch (error) {
    return failure(error);
  }
}

async function askStreamed(
  core: CoreAdapter,
  call: CoreCall,
  onDelta: (text: string) => void | Promise<void>,
): Promise<Asked> {
  const pass = (text: string) => (call.cancelled ? undefined : onDelta(text));
  if (!core.stream) {
    const result = await ask(core, call);
    if (result.ok) pass(result.reply);
    return result;
  }
  const trimmer = createTrimmer(pass);
  try {
    for await (const chunk of core.stream(call)) {
      if (call.cancelled) break;
      if (chunk.type === 'delta') {
        // The next piece is taken from the core only once the client has read this one (or
        // gone): an upstream is then read no faster than the client reads.
        const sent = trimmer.push(chunk.text);
        if (sent) await sent;
      } else
        call.onUsage({
          promptTokens: chunk.promptTokens,
          completionTokens: chunk.completionTokens,
        });
    }
  } catch (error) {
    return failure(error);
  }
  const reply = trimmer.text();
  return reply === '' ? emptyReply() : { ok: true, reply };
}

/**
 * Passes text on without the whitespace at the start of the reply, and holds back trailing
 * whitespace until more text follows it: what was passed on, joined, is the reply trimmed.
 */
function createTrimmer(pass: (text: string) => void | Promise<void>) {
  let started = false;
  let held = '';
  let text = '';
  return {
    push(piece: string): void | Promise<void> {
      let rest = piece;
      if (!started) {
        rest = rest.trimStart();
        if (rest === '') return;
        started = true;
      }
      const joined = held + rest;
      const end = joined.trimEnd().length;
      held = joined.slice(end);
      const out = joined.slice(0, end);
      if (out === '') return;
      text += out;
      return pass(out);
    },
    text: () => text,
  };
}

/**
 * What the core is asked: the turn's request, its usage reported to the turn too, and a
 * signal that aborts when the turn ends (deadline, client gone, stopping).
 */
class CoreCall implements CoreRequest {
  readonly language: Language;
  readonly message: string;
  readonly history: readonly Turn[];
  readonly conversationId: string | undefined;
  readonly onNotice: ((notice: CoreNotice) => void) | undefined;
  readonly instructions: readonly string[] | undefined;
  readonly sampling: Sampling | undefined;
  readonly signal = new Cancellation();

  constructor(
    private readonly request: TurnCoreRequest,
    private readonly report: (usage: TokenUsage) => void,
  ) {
    this.language = request.language;
    this.message = request.message;
    this.history = request.history;
    this.conversationId = request.conversationId;
    this.onNotice = request.onNotice;
    this.instructions = request.instructions;
    this.sampling = request.sampling;
  }

  /** Set once the turn has ended: nothing the core still sends is passed on. */
  get cancelled(): boolean {
    return this.signal.aborted;
  }

  readonly onUsage = (usage: TokenUsage): void => {
    this.report(usage);
    this.request.onUsage?.(usage);
  };

  cancel(reason: unknown): void {
    this.signal.abort(reason);
  }
}

function emptyReply(): Asked {
  const cause = new CoreError('core_unavailable', 'core returned an empty reply');
  return { ok: false, code: 'core_unavailable', cause };
}

function failure(error: unknown): Asked {
  const code = error instanceof CoreError ? error.code : 'internal_error';
  return { ok: false, code, cause: error };
}
