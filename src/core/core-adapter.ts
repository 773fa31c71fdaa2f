/**
 * @module core/core-adapter
 * The seam between the HTTP API and whatever produces replies. Every adapter
 * (builtin, openai, ...) implements `CoreAdapter`; `createCore` in `create-core.ts`
 * is the only place that chooses one.
 */
import type { CancelSignal } from '../util/cancellation.js';

/** The language of the endpoint: `/api/chat` is German, `/api/chat-en` English. */
export type Language = 'de' | 'en';

/** One earlier exchange of the session, oldest first in `CoreRequest.history`. */
export interface Turn {
  readonly message: string;
  readonly reply: string;
  readonly language: Language;
}

export interface CoreRequest {
  /** The language the reply must be in (the endpoint's language). */
  readonly language: Language;
  /** The user's message: non-empty, at most the configured length. */
  readonly message: string;
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

/** A piece of a streamed reply: text to show, or the token counts (at most once, at the end). */
export type CoreChunk =
  | { readonly type: 'delta'; readonly text: string }
  | ({ readonly type: 'usage' } & TokenUsage);

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
}

export type CoreErrorCode = 'core_unavailable' | 'core_timeout';

/** A technical failure of the core. Its message is for logs only and never reaches a client. */
export class CoreError extends Error {
  override readonly name = 'CoreError';
  constructor(
    readonly code: CoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
