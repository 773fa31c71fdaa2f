/**
 * @module core/http/upstream-config
 * The settings every HTTP-upstream core shares (timeout, retries, backoff, pool size), for
 * `PLAUDER_<CORE>_*` variables, declared with the same rules as the rest of the
 * configuration (`util/settings.ts`), so every problem is reported at once.
 */

import { duration, durationText, integer, type Setting, setting } from '../../util/settings.js';

/** How an adapter talks to its upstream; see src/core/http/http-upstream.ts. */
export interface UpstreamSettings {
  /** Time limit of one attempt (connect + request + full response). */
  readonly timeoutMs: number;
  /** Attempts after the first one; 0 disables retries. */
  readonly maxRetries: number;
  /** Base of the full-jitter exponential backoff. */
  readonly retryBaseDelayMs: number;
  /** Upper bound of any wait between attempts, including one asked for by `Retry-After`. */
  readonly retryMaxDelayMs: number;
  /** Upper bound of concurrent (and pooled keep-alive) connections to the upstream. */
  readonly maxConnections: number;
}

/**
 * `<prefix>_TIMEOUT`, `_MAX_RETRIES`, `_RETRY_BASE_DELAY`, `_RETRY_MAX_DELAY` and
 * `_MAX_CONNECTIONS`, each with its default from `defaults`. Delays are timers: at most
 * 2^31-1 ms.
 */
export function upstreamSettings(prefix: string, defaults: UpstreamSettings) {
  return {
    timeoutMs: setting(`${prefix}_TIMEOUT`, duration(), durationText(defaults.timeoutMs)),
    maxRetries: setting(`${prefix}_MAX_RETRIES`, integer(0, 10), String(defaults.maxRetries)),
    retryBaseDelayMs: setting(
      `${prefix}_RETRY_BASE_DELAY`,
      duration({ min: 0 }),
      durationText(defaults.retryBaseDelayMs),
    ),
    retryMaxDelayMs: setting(
      `${prefix}_RETRY_MAX_DELAY`,
      duration({ min: 0 }),
      durationText(defaults.retryMaxDelayMs),
    ),
    maxConnections: setting(
      `${prefix}_MAX_CONNECTIONS`,
      integer(1, 10_000),
      String(defaults.maxConnections),
    ),
  } satisfies Record<keyof UpstreamSettings, Setting<unknown>>;
}
