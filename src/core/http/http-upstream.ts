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
import { type StreamDecoder, type StreamTimeouts, streamFromUpstream } from './http-stream.js';
import { isRetryableStatus, parseRetryAfterMs, retryDelayMs, sleep } from './retry-policy.js';
import {
  type AttemptFailure,
  type AttemptResult,
  createUpstreamClient,
  type UpstreamResponse,
} from './upstream-client.js';
import type { UpstreamSettings } from './upstream-config.js';

/** What an adapter made of a 2xx body: a value, or what was wrong with it (for the log). */
export type BodyReading<T> =
  | { readonly ok: true; readonly value: T }
  /** `problem` names what was wrong, never the upstream's text. */
  | { readonly ok: false; readonly problem: string };

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

export type Outcome<T> =
  | { readonly kind: 'value'; readonly value: T }
  | { readonly kind: 'fail'; readonly error: CoreError }
  | { readonly kind: 'retry'; readonly error: CoreError; readonly retryAfterMs?: number };

interface Judging<T> {
  readonly label: string;
  readonly hints: Readonly<Record<number, string>>;
  /** `attempt n of m`, for the log. */
  readonly where: string;
  readonly read: (body: string) => BodyReading<T>;
}

/** Turns one attempt's result into a value, a final failure or a retryable failure. */
function judge<T>(result: AttemptResult, judging: Judging<T>): Outcome<T> {
  return result.ok
    ? judgeResponse(result.response, judging)
    : judgeFailure(result.failure, judging);
}

export function judgeFailure<T>(
  failure: AttemptFailure,
  { label, where }: Pick<Judging<T>, 'label' | 'where'>,
): Outcome<T> {
  switch (failure.kind) {
    case 'aborted':
      return { kind: 'fail', error: abortError(label, failure.reason, `during ${where}`) };
    case 'timeout': {
      const message = `${label}: no complete reply within ${failure.afterMs}ms (${where})`;
      return { kind: 'retry', error: new CoreError('core_timeout', message) };
    }
    case 'connection': {
      const message = `${label}: connection to upstream failed: ${failure.code} (${where})`;
      const error = new CoreError('core_unavailable', message, { cause: failure.cause });
      return { kind: 'retry', error };
    }
    case 'unsendable': {
      const message = `${label}: the request could not be built: ${failure.code} (${where})`;
      return { kind: 'fail', error: new CoreError('core_unavailable', message) };
    }
    case 'too_large': {
      const message = `${label}: reply larger than ${failure.limitBytes} bytes (${where})`;
      return { kind: 'fail', error: new CoreError('core_unavailable', message) };
    }
  }
}

function judgeResponse<T>(response: UpstreamResponse, judging: Judging<T>): Outcome<T> {
  const { status, headers, body } = response;
  const { label, where } = judging;
  const refused = judgeStatus<T>(status, headers, judging);
  if (refused) return refused;
  const reading = judging.read(body);
  if (reading.ok) return { kind: 'value', value: reading.value };
  const message = `${label}: unusable reply with HTTP ${status}: ${reading.problem} (${where})`;
  return { kind: 'fail', error: new CoreError('core_unavailable', message) };
}

/** A non-2xx status as a final or retryable failure; `undefined` for a 2xx. */
export function judgeStatus<T>(
  status: number,
  headers: UpstreamResponse['headers'],
  { label, hints, where }: Pick<Judging<T>, 'label' | 'hints' | 'where'>,
): Outcome<T> | undefined {
  if (status < 200 || status > 299) {
    const retryable = isRetryableStatus(status);
    const note = retryable ? '' : `, not retried${hints[status] ?? ''}`;
    const message = `${label}: upstream answered HTTP ${status} (${where}${note})`;
    const error = new CoreError('core_unavailable', message);
    if (!retryable) return { kind: 'fail', error };
    const retryAfterMs = parseRetryAfterMs(headers['retry-after']);
    return retryAfterMs === undefined
      ? { kind: 'retry', error }
      : { kind: 'retry', error, retryAfterMs };
  }
  return undefined;
}

/**
 * The caller aborts when its own deadline for the core has passed (or the client left, when
 * the code no longer matters), so an abort is reported as `core_timeout`.
 */
export function abortError(label: string, reason: unknown, when: string): CoreError {
  const name =
    typeof reason === 'object' && reason !== null && 'name' in reason
      ? String(reason.name)
      : typeof reason;
  return new CoreError('core_timeout', `${label}: aborted by the caller (${name}) ${when}`, {
    cause: reason,
  });
}
