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
 * further delta is passed on, whatever the core still does. A streamed reply is kept as its
 * UTF-8 bytes (src/chat/reply-text.ts), not as a string grown piece by piece.
 */
import {
  type CoreAdapter,
  CoreError,
  type CoreFinish,
  type CoreNotice,
  type CoreRequest,
  type GatewayParameters,
  type JsonObject,
  type Language,
  type Sampling,
  type TokenUsage,
  type ToolCall,
  type Turn,
  type WireMessage,
} from '../core/core-adapter.js';
import { Cancellation, type CancelSignal } from '../util/cancellation.js';
import { type HeldReply, ReplyText } from './reply-text.js';

export type CoreFailureCode = 'internal_error' | 'core_unavailable' | 'core_timeout';

export type CoreResult =
  | {
      readonly ok: true;
      /** A core's string, or a streamed reply's bytes. */
      readonly reply: HeldReply;
      readonly usage: TokenUsage | undefined;
      /** How the answer ended when it was more than text (tool calls, a length stop). */
      readonly finish: CoreFinish | undefined;
    }
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
 * turns reachable until the next full collection, so every scavenge promoted finished
 * requests to the old generation.
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

/**
 * Where a streamed reply's pieces go as they come: its text, and its tool-call deltas. A
 * promise returned says the client has not read the piece yet: the next one is taken from
 * the core only once it settles, so an upstream is read no faster than the client reads.
 */
export interface CoreStreamSink {
  delta(text: string): void | Promise<void>;
  toolCalls(deltas: readonly JsonObject[]): void | Promise<void>;
}

export async function runCore(
  core: CoreAdapter,
  request: Omit<CoreRequest, 'signal'>,
  { client, stopping, timeoutMs }: CoreLimits,
  sink?: CoreStreamSink,
): Promise<CoreResult> {
  // One promise settled by whichever comes first, the core's answer or a stop (not a
  // Promise.race with a promise that a finished turn never settles).
  let stop: (reason: Asked) => void = () => {};
  const settled = new Promise<Asked>((resolve) => {
    stop = resolve;
  });
  let usage: TokenUsage | undefined;
  let finish: CoreFinish | undefined;
  const call = new CoreCall(
    request,
    (counted) => {
      usage = counted;
    },
    (ended) => {
      finish = ended;
    },
  );
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
    (sink ? askStreamed(core, call, sink) : ask(core, call)).then(stop);
    const result = await settled;
    return result.ok ? { ok: true, reply: result.reply, usage, finish } : result;
  } finally {
    clearTimeout(timer);
    client.removeEventListener('abort', onClientGone);
    unwatch();
  }
}

/** What a turn hands the core, before its signal and usage callback are added. */
type TurnCoreRequest = Omit<CoreRequest, 'signal'>;

/** The core's answer before the usage it reported is added. */
type Failed = Exclude<CoreResult, { ok: true }>;
type Asked = Failed | { readonly ok: true; readonly reply: HeldReply };

async function ask(
  core: CoreAdapter,
  call: CoreCall,
): Promise<Failed | { readonly ok: true; readonly reply: string }> {
  try {
    const reply = await core.reply(call);
    if (typeof reply !== 'string') return emptyReply();
    // An answer made of tool calls alone has no text.
    if (reply.trim().length === 0 && !call.calledTools) return emptyReply();
    return { ok: true, reply };
  } catch (error) {
    return failure(error);
  }
}

async function askStreamed(
  core: CoreAdapter,
  call: CoreCall,
  sink: CoreStreamSink,
): Promise<Asked> {
  const pass = (text: string) => (call.cancelled ? undefined : sink.delta(text));
  if (!core.stream) {
    const result = await ask(core, call);
    if (result.ok && result.reply !== '') pass(result.reply);
    return result;
  }
  const trimmer = createTrimmer(pass);
  // Made at the first tool-call delta: most streamed replies are text only.
  let calls: ToolCallCollector | undefined;
  let reason: string | undefined;
  try {
    for await (const chunk of core.stream(call)) {
      if (call.cancelled) break;
      switch (chunk.type) {
        case 'delta': {
          const sent = trimmer.push(chunk.text);
          if (sent) await sent;
          break;
        }
        case 'tool_calls': {
          calls ??= new ToolCallCollector();
          calls.add(chunk.deltas);
          const sent = call.cancelled ? undefined : sink.toolCalls(chunk.deltas);
          if (sent) await sent;
          break;
        }
        case 'finish':
          reason = chunk.reason;
          break;
        case 'usage':
          call.onUsage({
            promptTokens: chunk.promptTokens,
            completionTokens: chunk.completionTokens,
          });
          break;
        default:
          chunk satisfies never;
      }
    }
  } catch (error) {
    return failure(error);
  }
  const toolCalls = calls?.calls() ?? [];
  if (toolCalls.length > 0) call.onFinish({ reason: reason ?? 'tool_calls', toolCalls });
  else if (reason !== undefined && reason !== 'stop') call.onFinish({ reason });
  const reply = trimmer.text;
  return reply.byteLength === 0 && toolCalls.length === 0 ? emptyReply() : { ok: true, reply };
}

/**
 * Joins streamed tool-call deltas into whole calls, as OpenAI's clients do: by `index`, the
 * id, type and name from the first delta that has them, the arguments concatenated.
 */
class ToolCallCollector {
  private readonly byIndex = new Map<number, { id: string; name: string; arguments: string }>();

  add(deltas: readonly JsonObject[]): void {
    for (const delta of deltas) {
      const index = typeof delta.index === 'number' ? delta.index : this.byIndex.size;
      let call = this.byIndex.get(index);
      if (call === undefined) {
        call = { id: '', name: '', arguments: '' };
        this.byIndex.set(index, call);
      }
      if (typeof delta.id === 'string' && call.id === '') call.id = delta.id;
      const fn = delta.function;
      if (typeof fn === 'object' && fn !== null && !Array.isArray(fn)) {
        const { name, arguments: args } = fn as JsonObject;
        if (typeof name === 'string' && call.name === '') call.name = name;
        if (typeof args === 'string') call.arguments += args;
      }
    }
  }

  calls(): ToolCall[] {
    return [...this.byIndex.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: call.arguments },
      }));
  }
}

/**
 * Passes text on without the whitespace at the start of the reply, and holds back trailing
 * whitespace until more text follows it: what was passed on, joined, is the reply trimmed.
 */
function createTrimmer(pass: (text: string) => void | Promise<void>) {
  let started = false;
  let held = '';
  const text = new ReplyText();
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
      text.append(out);
      return pass(out);
    },
    text,
  };
}

/**
 * What the core is asked: the turn's request, its usage reported to the turn too, and a
 * signal that aborts when the turn ends (deadline, client gone, stopping).
 */
class CoreCall implements CoreRequest {
  readonly language: Language;
  readonly message: string;
  readonly input: readonly WireMessage[] | undefined;
  readonly gateway: GatewayParameters | undefined;
  readonly history: readonly Turn[];
  readonly conversationId: string | undefined;
  readonly onNotice: ((notice: CoreNotice) => void) | undefined;
  readonly instructions: readonly string[] | undefined;
  readonly sampling: Sampling | undefined;
  readonly signal = new Cancellation();
  /** The core reported tool calls: its answer may be empty text. */
  calledTools = false;

  constructor(
    private readonly request: TurnCoreRequest,
    private readonly report: (usage: TokenUsage) => void,
    private readonly ended: (finish: CoreFinish) => void,
  ) {
    this.language = request.language;
    this.message = request.message;
    this.input = request.input;
    this.gateway = request.gateway;
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

  readonly onFinish = (finish: CoreFinish): void => {
    if (finish.toolCalls !== undefined && finish.toolCalls.length > 0) this.calledTools = true;
    this.ended(finish);
  };

  cancel(reason: unknown): void {
    this.signal.abort(reason);
  }
}

function emptyReply(): Failed {
  const cause = new CoreError('core_unavailable', 'core returned an empty reply');
  return { ok: false, code: 'core_unavailable', cause };
}

function failure(error: unknown): Failed {
  const code = error instanceof CoreError ? error.code : 'internal_error';
  return { ok: false, code, cause: error };
}
