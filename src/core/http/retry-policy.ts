/**
 * @module core/http/retry-policy
 * When to retry an upstream call and how long to wait before the next attempt.
 */
import type { CancelSignal } from '../../util/cancellation.js';

/**
 * 408 and 429 mean "not now", 5xx a server-side failure; both may pass. Every other 4xx
 * (bad request, wrong key, unknown model) fails the same way again, so it is not retried.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}

/**
 * Full-jitter exponential backoff (a uniformly random wait up to `base * 2^(retry-1)`, capped),
 * which spreads the retries of many clients instead of synchronising them. A `Retry-After`
 * from the upstream replaces the random wait but is capped by `maxMs` too, so the total time
 * of a reply stays bounded by the configuration.
 */
export function retryDelayMs(
  retry: number,
  baseMs: number,
  maxMs: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, maxMs);
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, retry - 1));
  return Math.floor(random() * ceiling);
}

/** `Retry-After` as delay seconds or an HTTP date; `undefined` when absent or unreadable. */
export function parseRetryAfterMs(
  value: string | string[] | undefined,
  now: number = Date.now(),
): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(text)) return Math.round(Number(text) * 1000);
  // V8's Date.parse reads things like "-5" as a year; an HTTP date always names day and month.
  const date = /[a-z]{3}/i.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Waits `ms`; resolves `false` at once when `signal` aborts first. */
export function sleep(ms: number, signal: CancelSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
