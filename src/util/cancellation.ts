/**
 * @module util/cancellation
 * A signal that says "stop": what the turn, the cores and the undici pool read of an
 * `AbortSignal` (`aborted`, `reason`, `abort` listeners), as a plain object.
 *
 * Not an `AbortController`: on Node 20 every `AbortSignal` is promoted out of V8's young
 * generation at once, and a few per request made every scavenge copy and pause far longer.
 * An `AbortSignal`
 * is a `CancelSignal` too, so callers and tests may pass one.
 */
export interface CancelSignal {
  readonly aborted: boolean;
  /** Why it aborted; undefined until then. */
  readonly reason: unknown;
  /** `listener` is called once, when it aborts (never when it already has). */
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export class Cancellation implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    if (this.listeners === undefined) this.listeners = [listener];
    else this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const index = this.listeners?.indexOf(listener) ?? -1;
    if (index >= 0) this.listeners?.splice(index, 1);
  }

  /** Aborts once: listeners are called in the order they were added, then forgotten. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const listener of listeners) listener();
  }
}
