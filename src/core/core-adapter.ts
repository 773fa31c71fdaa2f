/**
 * @module core/core-adapter
 * The seam between the HTTP API and whatever produces replies. Every adapter
 * (builtin, openai, ...) implements `CoreAdapter`; `createCore` in `create-core.ts`
 * is the only place that chooses one.
 */

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
  readonly signal: AbortSignal;
}

export interface CoreAdapter {
  /** Short, stable name for logs and metrics (`builtin`, `openai`, ...). */
  readonly name: string;
  /**
   * Produces a non-empty reply in `request.language`.
   * Technical failures are thrown as `CoreError`; anything else thrown is treated
   * as `core_unavailable` by the caller.
   */
  reply(request: CoreRequest): Promise<string>;
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
