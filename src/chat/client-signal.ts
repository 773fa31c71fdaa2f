/**
 * @module chat/client-signal
 * How a turn hears that its client went away: the part of an `AbortSignal` the turn uses.
 * An `AbortSignal` is one (tests pass `AbortController`s); the front doors pass a lighter
 * object of their own (routes/api/client-signal.ts).
 */
export interface ClientSignal {
  readonly aborted: boolean;
  /** Why it aborted (passed on to the core's signal); undefined until then. */
  readonly reason: unknown;
  /** `listener` is called once, when it aborts. */
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}
