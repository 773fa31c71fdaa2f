/**
 * @module core/core-adapter
 * The seam between the HTTP API and whatever produces replies. Every adapter
 * (builtin, openai, ...) implements `CoreAdapter`; `createCore` in `create-core.ts`
 * is the only place that chooses one.
 */
import type { CancelSignal } from '../util/cancellation.js';
import type { UpstreamObserver } from './http/upstream-observer.js';

/** The language of the endpoint: `/api/chat` is German, `/api/chat-en` English. */
export type Language = 'de' | 'en';

/** A JSON value as a client or an upstream sent it. */
export type Json = string | number | boolean | null | readonly Json[] | JsonObject;
export interface JsonObject {
  readonly [name: string]: Json;
}

/**
 * A Chat Completions message as the client sent it or the upstream answered it (`role`,
 * `content` as text or parts, `tool_calls`, `tool_call_id`): passed through unchanged.
 */
export type WireMessage = JsonObject;

/** One earlier exchange of the session, oldest first in `CoreRequest.history`. */
export interface Turn {
  /** What the user said: the text of the turn's input (tool results' text in an agent loop). */
  readonly message: string;
  /** What the core answered, as text (empty when it answered only with tool calls). */
  readonly reply: string;
  readonly language: Language;
  /**
   * The exchange as Chat Completions messages, when it holds more than text (image parts,
   * tool calls, tool results): the input messages, then the assistant's answer. A gateway
   * core sends these instead of `message` and `reply`; other cores read the text.
   */
  readonly wire?: readonly WireMessage[];
}

/**
 * The Chat Completions parameters that only a gateway core honours, passed to its upstream
 * as the client sent them. A core without `gateway` refuses a request that uses them.
 */
export const GATEWAY_PARAMETERS = [
  'response_format',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
] as const;
export type GatewayParameter = (typeof GATEWAY_PARAMETERS)[number];
export type GatewayParameters = Readonly<Partial<Record<GatewayParameter, Json>>>;

/** A tool call of the assistant, as OpenAI sends it. */
export interface ToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/** How the core's answer ended, beyond its text (an upstream that called tools, or stopped). */
export interface CoreFinish {
  /** OpenAI's `finish_reason` (`stop`, `length`, `tool_calls`, `content_filter`). */
  readonly reason: string;
  readonly toolCalls?: readonly ToolCall[];
}

export interface CoreRequest {
  /** The language the reply must be in (the endpoint's language). */
  readonly language: Language;
  /** The user's message: non-empty, at most the configured length. */
  readonly message: string;
  /**
   * The turn's input as Chat Completions messages, when it holds more than the text of one
   * user message (tool results, image parts): a gateway core sends these instead of
   * `message`. Only given to a core with `gateway`.
   */
  readonly input?: readonly WireMessage[];
  /** Parameters passed through to a gateway core's upstream; only given to such a core. */
  readonly gateway?: GatewayParameters;
  /** The session's memory window, oldest first; empty without a sessionId. */
  readonly history: readonly Turn[];
  /** Aborted when the request's core timeout expires or the client is gone. */
  readonly signal: CancelSignal;
  /**
   * An opaque, stable name of the conversation, for cores that keep a conversation's state
   * themselves (the `rasa` core sends it as `sender`). The same for every turn of one session
   * (same key id and sessionId), different for every other key or session, and revealing
   * neither: the caller passes `OpenSession.conversationId`, a keyed hash. Undefined without
   * a sessionId, when the turn belongs to no conversation. Cores with no state ignore it.
   */
  readonly conversationId?: string;
  /**
   * Told about an event worth a log line that is not a failure (the reply was still made),
   * e.g. a bot's empty answer replaced by the fallback. Optional; cores never wait on it.
   */
  readonly onNotice?: (notice: CoreNotice) => void;
  /**
   * The client's own instructions (the system and developer messages of an OpenAI-style
   * request), oldest first. An LLM core sends them after the operator's system prompt; a core
   * without a prompt (builtin, rasa) ignores them. Absent: none.
   */
  readonly instructions?: readonly string[];
  /** The client's sampling choices, passed on by an LLM core; others ignore them. */
  readonly sampling?: Sampling;
  /**
   * Told the token counts of the reply when the core knows them (an LLM upstream reports
   * them). Optional; a core that cannot count does not call it.
   */
  readonly onUsage?: (usage: TokenUsage) => void;
  /**
   * Told how the answer ended when it is more than text: the upstream's `finish_reason` and
   * the tool calls it made. A reply made of tool calls alone may then be empty text.
   */
  readonly onFinish?: (finish: CoreFinish) => void;
}

/** Sampling options a client may set (`/v1/chat/completions`); each absent when not set. */
export interface Sampling {
  readonly maxTokens?: number;
  readonly temperature?: number;
  readonly topP?: number;
  readonly stop?: readonly string[];
  /** The client's end-user id, passed on for the upstream's abuse monitoring. */
  readonly user?: string;
}

export interface TokenUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

/**
 * A piece of a streamed reply: text to show, the token counts (at most once, at the end),
 * tool-call deltas as OpenAI streams them (`delta.tool_calls`, passed on unchanged), or how
 * the answer ended (`finish_reason`).
 */
export type CoreChunk =
  | { readonly type: 'delta'; readonly text: string }
  | ({
      readonly type: 'usage' /** The model the upstream says answered. */;
      readonly model?: string;
    } & TokenUsage)
  | { readonly type: 'tool_calls'; readonly deltas: readonly JsonObject[] }
  | { readonly type: 'finish'; readonly reason: string };

/** Events a core reports besides its reply. Never message text: they go to the logs. */
export type CoreNotice = {
  /** The upstream answered with nothing to show; the core replied with its fallback. */
  readonly kind: 'empty_answer';
  /** The adapter's name. */
  readonly core: string;
  readonly language: Language;
  /** How many messages the answer had, none of them with text (0: an empty answer). */
  readonly messages: number;
};

export interface CoreAdapter {
  /** Short, stable name for logs and metrics (`builtin`, `openai`, ...). */
  readonly name: string;
  /**
   * True for a core in front of an LLM server that speaks Chat Completions: it passes the
   * gateway parameters, tool messages and image parts through (docs/contract.md,
   * "OpenAI-compatible door"). Other cores are never given them.
   */
  readonly gateway?: boolean;
  /**
   * How many calls it serves at once: the size of its upstream's connection pool. Turns
   * beyond it wait for a slot, shared fairly among keys (src/chat/fair-share.ts), instead of
   * queueing in the pool in arrival order. Absent: unbounded (an in-process core).
   */
  readonly capacity?: number;
  /**
   * Produces a non-empty reply in `request.language`.
   * Technical failures are thrown as `CoreError`; anything else thrown is treated
   * as `core_unavailable` by the caller.
   */
  reply(request: CoreRequest): Promise<string>;
  /**
   * The reply in pieces, as they are made (optional). The deltas joined are the reply, with
   * the same rules as `reply`; failures are thrown as `CoreError` like there, also after the
   * first delta. A core without it is streamed as its `reply` in one delta.
   */
  stream?(request: CoreRequest): AsyncIterable<CoreChunk>;
  /** Releases pooled connections and timers. */
  close?(): Promise<void>;
  /**
   * The state of each upstream's circuit breaker, by position (never its URL), for `/readyz`
   * and `/metrics`. Absent: a core without upstreams.
   */
  upstreams?(): readonly UpstreamHealth[];
  /** Tells `observer` of every upstream attempt from now on (metrics, traces). */
  observe?(observer: UpstreamObserver): void;
}

/** An upstream's breaker: `closed`, `open` (resting) or `half_open` (one probe may go). */
export interface UpstreamHealth {
  readonly upstream: number;
  readonly state: 'closed' | 'open' | 'half_open';
  /** Seconds until the breaker lets a probe through (0 unless open). */
  readonly retryInSeconds: number;
}

export type CoreErrorCode = 'core_unavailable' | 'core_timeout';

/** A technical failure of the core. Its message is for logs only and never reaches a client. */
export class CoreError extends Error {
  override readonly name = 'CoreError';
  /**
   * Set when the core refused at once because every upstream is resting (their circuit
   * breakers are open): how long until one may be asked again. Such a turn is answered 503
   * with `Retry-After` (docs/core.md, "Several upstreams").
   */
  readonly retryAfterMs: number | undefined;
  constructor(
    readonly code: CoreErrorCode,
    message: string,
    options?: { cause?: unknown; retryAfterMs?: number },
  ) {
    super(message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}
