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
  type CoreRequest,
  type TokenUsage,
} from '../core/core-adapter.js';

export type CoreFailureCode = 'internal_error' | 'core_unavailable' | 'core_timeout';

export type CoreResult =
  | { readonly ok: true; readonly reply: string; readonly usage: TokenUsage | undefined }
  | { readonly ok: false; readonly code: CoreFailureCode; readonly cause: unknown }
  | { readonly ok: false; readonly code: 'client_closed' };

export interface CoreLimits {
  /** Aborts when the client has gone away. */
  readonly client: AbortSignal;
  /** Tells when the service stops and in-flight turns may no longer wait. */
  readonly stopping: Stopping;
  readonly timeoutMs: number;
}

/**
 * The service stopping, as every turn waiting for its core hears of it. A set of callbacks
 * rather than an AbortSignal: adding and removing an EventTarget listener on every turn
 * cost more than the rest of this module's bookkeeping.
 */
export interface Stopping {
  readonly stopped: boolean;
  /** Calls `listener` once when the service stops; returns how to stop listening. */
  watch(listener: () => void): () => void;
}

export function createStopping(): Stopping & { stop(): void } {
  const listeners = new Set<() => void>();
  let stopped = false;
  return {
    get stopped() {
      return stopped;
    },
    watch(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      for (const listener of listeners) listener();
      listeners.clear();
    },
  };
}

export async function runCore(
  core: CoreAdapter,
  request: Omit<CoreRequest, 'signal'>,
  { client, stopping, timeoutMs }: CoreLimits,
  onDelta?: (text: string) => void,
): Promise<CoreResult> {
  const controller = new AbortController();
  const { signal } = controller;
  let stop: (reason: CoreResult) => void = () => {};
  const stopped = new Promise<CoreResult>((resolve) => {
    stop = resolve;
  });
  const onClientGone = () => {
    // Settle first, so the race reports the client, not the core's reaction to the abort.
    stop({ ok: false, code: 'client_closed' });
    controller.abort(client.reason);
  };
  const timer = setTimeout(() => {
    const cause = new CoreError('core_timeout', `core did not answer within ${timeoutMs} ms`);
    stop({ ok: false, code: 'core_timeout', cause });
    controller.abort(cause);
  }, timeoutMs);
  const onStopping = () => {
    const cause = new CoreError('core_unavailable', 'the service stopped before the core answered');
    stop({ ok: false, code: 'core_unavailable', cause });
    controller.abort(cause);
  };
  client.addEventListener('abort', onClientGone, { once: true });
  const unwatch = stopping.watch(onStopping);
  if (client.aborted) onClientGone();
  else if (stopping.stopped) onStopping();
  try {
    const asking = onDelta
      ? askStreamed(core, request, signal, onDelta)
      : ask(core, request, signal);
    return await Promise.race([asking, stopped]);
  } finally {
    clearTimeout(timer);
    client.removeEventListener('abort', onClientGone);
    unwatch();
  }
}

/** What a turn hands the core, before its signal and usage callback are added. */
type TurnCoreRequest = Omit<CoreRequest, 'signal'>;

async function ask(
  core: CoreAdapter,
  request: TurnCoreRequest,
  signal: AbortSignal,
): Promise<CoreResult> {
  try {
    let usage: TokenUsage | undefined;
    const reply = await core.reply(forCore(request, signal, (counted) => (usage = counted)));
    if (typeof reply !== 'string' || reply.trim().length === 0) return emptyReply();
    return { ok: true, reply, usage };
  } catch (error) {
    return failure(error);
  }
}

async function askStreamed(
  core: CoreAdapter,
  request: TurnCoreRequest,
  signal: AbortSignal,
  onDelta: (text: string) => void,
): Promise<CoreResult> {
  const pass = (text: string) => {
    if (!signal.aborted) onDelta(text);
  };
  if (!core.stream) {
    const result = await ask(core, request, signal);
    if (result.ok) pass(result.reply);
    return result;
  }
  let usage: TokenUsage | undefined;
  const trimmer = createTrimmer(pass);
  try {
    const streamed = core.stream(forCore(request, signal, (counted) => (usage = counted)));
    for await (const chunk of streamed) {
      if (signal.aborted) break;
      if (chunk.type === 'delta') trimmer.push(chunk.text);
      else usage = { promptTokens: chunk.promptTokens, completionTokens: chunk.completionTokens };
    }
  } catch (error) {
    return failure(error);
  }
  const reply = trimmer.text();
  return reply === '' ? emptyReply() : { ok: true, reply, usage };
}

/**
 * Passes text on without the whitespace at the start of the reply, and holds back trailing
 * whitespace until more text follows it: what was passed on, joined, is the reply trimmed.
 */
function createTrimmer(pass: (text: string) => void) {
  let started = false;
  let held = '';
  let text = '';
  return {
    push(piece: string) {
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
      pass(out);
    },
    text: () => text,
  };
}

/** The request with the turn's signal, and its usage reported to the turn too (one copy). */
function forCore(
  request: TurnCoreRequest,
  signal: AbortSignal,
  onUsage: (usage: TokenUsage) => void,
): CoreRequest {
  return {
    ...request,
    signal,
    onUsage: (usage) => {
      onUsage(usage);
      request.onUsage?.(usage);
    },
  };
}

function emptyReply(): CoreResult {
  const cause = new CoreError('core_unavailable', 'core returned an empty reply');
  return { ok: false, code: 'core_unavailable', cause };
}

function failure(error: unknown): CoreResult {
  const code = error instanceof CoreError ? error.code : 'internal_error';
  return { ok: false, code, cause: error };
}
