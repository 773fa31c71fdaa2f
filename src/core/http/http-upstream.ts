/**
 * @module core/http/http-upstream
 * What every core that POSTs JSON to HTTP servers shares (`openai`, `rasa`): a pooled client
 * per upstream, the failover and retry loop over them (src/core/http/failover.ts), a circuit
 * breaker per upstream, and how attempts end up as `CoreError`s. The adapter only builds the
 * body and reads a 2xx answer.
 *
 * Failure mapping (messages are for logs: status, attempt count and error class only; never
 * a credential, the user's message or upstream text):
 * - the last attempt timed out                  -> `core_timeout`
 * - `signal` aborted (caller's deadline or
 *   client gone), during an attempt or a wait    -> `core_timeout`, at once, no further retry
 * - 429 / 408 / 5xx / connection errors          -> the next upstream or a retry, then
 *                                                   `core_unavailable`
 * - other 4xx, unusable 2xx bodies, 3xx          -> `core_unavailable` at once
 * - every upstream's breaker open                -> `core_unavailable` with `retryAfterMs`,
 *                                                   at once, no upstream call
 */

import type { CancelSignal } from '../../util/cancellation.js';
import { CoreError, type UpstreamHealth } from '../core-adapter.js';
import { abortError, type BodyReading, judge } from './attempt-judging.js';
import type { BreakerSettings } from './circuit-breaker.js';
import { type BodyFor, bodyOf, TurnRoute, UpstreamPool, type UpstreamTarget } from './failover.js';
import { type StreamDecoder, type StreamTimeouts, streamFromUpstream } from './http-stream.js';
import { sleep } from './retry-policy.js';
import type { AttemptResult } from './upstream-client.js';
import type { UpstreamSettings } from './upstream-config.js';
import type { AttemptEnd, Describe, UpstreamObserver } from './upstream-observer.js';

export type { BodyReading } from './attempt-judging.js';

export interface HttpUpstreamOptions {
  /** Starts every error message, e.g. `openai core`. */
  readonly label: string;
  /** The upstreams in the order a turn tries them; at least one. */
  readonly targets: readonly UpstreamTarget[];
  readonly settings: UpstreamSettings;
  /** Operator hints for statuses that are not retried; they name variables, never values. */
  readonly statusHints?: Readonly<Record<number, string>>;
  /** Absent: the upstreams' breakers never open. */
  readonly breaker?: BreakerSettings;
  /** The breakers' clock (default `Date.now`); tests move it. */
  readonly now?: () => number;
  /**
   * An upstream whose attempt timed out is not asked again in that turn: a model server may
   * still be generating the answer (docs/core.md, "Several upstreams"). Default false.
   */
  readonly noRetryAfterTimeout?: boolean;
}

export interface HttpUpstream {
  /**
   * POSTs `body` until an attempt succeeds or the settings allow no more; resolves with what
   * `read` made of the 2xx body, throws a `CoreError` otherwise.
   */
  post<T>(
    body: BodyFor,
    signal: CancelSignal,
    read: (body: string) => BodyReading<T>,
    describe?: Describe<T>,
  ): Promise<T>;
  /**
   * POSTs `body` and yields the items `decoder` reads from the response as it streams
   * (src/core/http/http-stream.ts); throws a `CoreError` like `post`.
   */
  stream<T>(
    body: BodyFor,
    signal: CancelSignal,
    decoder: () => StreamDecoder<T>,
    timeouts: StreamTimeouts,
    describe?: Describe<T>,
  ): AsyncIterable<T>;
  /** Each upstream's breaker, by position. */
  health(): UpstreamHealth[];
  observe(observer: UpstreamObserver): void;
  /** Destroys the pools; later posts fail with `core_unavailable`. */
  close(): Promise<void>;
}

export function createHttpUpstream(options: HttpUpstreamOptions): HttpUpstream {
  const { label, settings } = options;
  const pool = new UpstreamPool(
    options.targets,
    settings,
    options.breaker,
    options.now ?? Date.now,
  );
  const hints = options.statusHints ?? {};
  let observer: UpstreamObserver | undefined;
  let closed = false;
  return {
    async post(body, signal, read, describe) {
      if (closed) throw new CoreError('core_unavailable', `${label}: the adapter is closed`);
      const route = new TurnRoute(pool, settings, label, options.noRetryAfterTimeout ?? false);
      for (;;) {
        // No attempt starts once the caller is gone (docs/contract.md, "Several upstreams").
        if (signal.aborted) {
          throw abortError(label, signal.reason, `before attempt ${route.attempt + 1}`);
        }
        const step = route.next();
        if (step instanceof CoreError) throw step;
        const { member, waitMs } = step;
        if (!(await sleep(waitMs, signal))) {
          route.released(member);
          const when = `while waiting to retry after attempt ${route.attempt - 1}`;
          throw abortError(label, signal.reason, when);
        }
        const watch = observer?.attempt({ ...member.start, streamed: false });
        const text = bodyOf(body, member.index);
        const result = await member.client.post(text, signal, settings.timeoutMs, watch?.headers);
        const outcome = judge(result, { label, hints, where: route.where, read });
        if (outcome.kind === 'value') {
          route.succeeded(member);
          watch?.end({ ...statusOf(result), ...describe?.(outcome.value) });
          return outcome.value;
        }
        route.failed(member, outcome);
        watch?.end({ ...statusOf(result), errorType: errorTypeOf(result) });
        if (outcome.kind === 'fail') throw outcome.error;
      }
    },
    stream(body, signal, decoder, timeouts, describe) {
      if (closed)
        return failing(new CoreError('core_unavailable', `${label}: the adapter is closed`));
      return streamFromUpstream(
        new TurnRoute(pool, settings, label, options.noRetryAfterTimeout ?? false),
        body,
        signal,
        {
          label,
          hints,
          timeouts,
          decoder,
          observer,
          describe,
        },
      );
    },
    health: () => pool.health(),
    observe(next) {
      observer = next;
    },
    async close() {
      closed = true;
      await pool.close();
    },
  };
}

function statusOf(result: AttemptResult): Pick<AttemptEnd, 'status'> {
  return result.ok ? { status: result.response.status } : {};
}

/** `error.type` of an attempt: the upstream's status, or what went wrong on the way. */
function errorTypeOf(result: AttemptResult): string {
  if (!result.ok) return result.failure.kind === 'aborted' ? 'cancelled' : result.failure.kind;
  const { status } = result.response;
  return status >= 200 && status < 300 ? 'invalid_response' : String(status);
}

/** A stream that fails at its first item. */
function failing(error: CoreError): AsyncIterable<never> {
  return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(error) }) };
}
