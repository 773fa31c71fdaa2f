/**
 * @module core/http/http-upstream
 * What every core that POSTs JSON to an HTTP server shares (`openai`, `rasa`): one pooled
 * client, the retry loop, and how attempts end up as `CoreError`s. The adapter only builds
 * the body and reads a 2xx answer.
 *
 * Failure mapping (messages are for logs: status, attempt count and error class only; never
 * a credential, the user's message or upstream text):
 * - the last attempt timed out                  -> `core_timeout`
 * - `signal` aborted (caller's deadline or
 *   client gone), during an attempt or a wait    -> `core_timeout`, at once, no further retry
 * - 429 / 408 / 5xx / connection errors          -> retried, then `core_unavailable`
 * - other 4xx, unusable 2xx bodies, 3xx          -> `core_unavailable` at once
 */

import type { CancelSignal } from '../../util/cancellation.js';
import { CoreError } from '../core-adapter.js';
import { abortError, type BodyReading, judge } from './attempt-judging.js';
import { type StreamDecoder, type StreamTimeouts, streamFromUpstream } from './http-stream.js';
import { retryDelayMs, sleep } from './retry-policy.js';
import { createUpstreamClient } from './upstream-client.js';
import type { UpstreamSettings } from './upstream-config.js';

export type { BodyReading } from './attempt-judging.js';

export interface HttpUpstreamOptions {
  /** Starts every error message, e.g. `openai core`. */
  readonly label: string;
  readonly url: URL;
  /** Fixed for the upstream's life; checked once, before the first request. */
  readonly headers: Readonly<Record<string, string>>;
  readonly settings: UpstreamSettings;
  /** Operator hints for statuses that are not retried; they name variables, never values. */
  readonly statusHints?: Readonly<Record<number, string>>;
}

export interface HttpUpstream {
  /**
   * POSTs `body` until an attempt succeeds or the settings allow no more; resolves with what
   * `read` made of the 2xx body, throws a `CoreError` otherwise.
   */
  post<T>(body: string, signal: CancelSignal, read: (body: string) => BodyReading<T>): Promise<T>;
  /**
   * POSTs `body` and yields the items `decoder` reads from the response as it streams
   * (src/core/http/http-stream.ts); throws a `CoreError` like `post`.
   */
  stream<T>(
    body: string,
    signal: CancelSignal,
    decoder: () => StreamDecoder<T>,
    timeouts: StreamTimeouts,
  ): AsyncIterable<T>;
  /** Destroys the pool; later posts fail with `core_unavailable`. */
  close(): Promise<void>;
}

export function createHttpUpstream(options: HttpUpstreamOptions): HttpUpstream {
  const { label, settings } = options;
  const client = createUpstreamClient(options.url, options.headers, settings.maxConnections);
  const hints = options.statusHints ?? {};
  let closed = false;
  return {
    async post(body, signal, read) {
      if (closed) throw new CoreError('core_unavailable', `${label}: the adapter is closed`);
      const attempts = settings.maxRetries + 1;
      for (let attempt = 1; ; attempt++) {
        if (signal.aborted) throw abortError(label, signal.reason, `before attempt ${attempt}`);
        const result = await client.post(body, signal, settings.timeoutMs);
        const where = `attempt ${attempt} of ${attempts}`;
        const outcome = judge(result, { label, hints, where, read });
        if (outcome.kind === 'value') return outcome.value;
        if (outcome.kind === 'fail' || attempt >= attempts) throw outcome.error;
        const { retryBaseDelayMs, retryMaxDelayMs } = settings;
        const wait = retryDelayMs(attempt, retryBaseDelayMs, retryMaxDelayMs, outcome.retryAfterMs);
        if (!(await sleep(wait, signal))) {
          const when = `while waiting to retry after attempt ${attempt}`;
          throw abortError(label, signal.reason, when);
        }
      }
    },
    stream(body, signal, decoder, timeouts) {
      if (closed)
        return failing(new CoreError('core_unavailable', `${label}: the adapter is closed`));
      return streamFromUpstream(client, body, signal, {
        label,
        hints,
        settings,
        timeouts,
        decoder,
      });
    },
    async close() {
      closed = true;
      await client.close();
    },
  };
}

/** A stream that fails at its first item. */
function failing(error: CoreError): AsyncIterable<never> {
  return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }) };
}
