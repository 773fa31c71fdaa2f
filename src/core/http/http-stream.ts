/**
 * @module core/http/http-stream
 * A streamed POST to the upstream: the response body is read as it arrives and decoded into
 * items (an adapter's deltas), each passed on at once. The same failure mapping as a plain
 * POST (src/core/http/http-upstream.ts), with these differences:
 * - the attempt's time limit is the time to the first item (`firstItemMs`), and then the
 *   longest gap between two items (`gapMs`), not the whole reply;
 * - a failed attempt is retried (with the same backoff) only while no item has been passed
 *   on: after that the reply cannot be taken back, so the failure ends the stream.
 * Leaving the loop early (the consumer stops iterating) or the caller's signal aborts the
 * upstream request at once.
 */

import { Cancellation, type CancelSignal } from '../../util/cancellation.js';
import { CoreError } from '../core-adapter.js';
import {
  abortError,
  type BodyReading,
  judgeFailure,
  judgeStatus,
  type Outcome,
} from './http-upstream.js';
import { retryDelayMs, sleep } from './retry-policy.js';
import type { UpstreamClient } from './upstream-client.js';
import type { UpstreamSettings } from './upstream-config.js';

/** Turns the body's text, as it arrives, into items; `end` is told when the body ended. */
export interface StreamDecoder<T> {
  push(text: string): BodyReading<readonly T[]>;
  /** The body ended: the last items, or what was wrong (e.g. it ended mid-reply). */
  end(): BodyReading<readonly T[]>;
}

export interface StreamTimeouts {
  /** From the start of an attempt to its first item. */
  readonly firstItemMs: number;
  /** The longest wait for the next item once one has arrived. */
  readonly gapMs: number;
}

export interface StreamParams<T> {
  readonly label: string;
  readonly hints: Readonly<Record<number, string>>;
  readonly settings: UpstreamSettings;
  readonly timeouts: StreamTimeouts;
  readonly decoder: () => StreamDecoder<T>;
}

type AttemptEnd =
  | { readonly kind: 'done' }
  | { readonly kind: 'failed'; readonly outcome: Outcome<never> };

export async function* streamFromUpstream<T>(
  client: UpstreamClient,
  body: string,
  signal: CancelSignal,
  params: StreamParams<T>,
): AsyncGenerator<T, void, undefined> {
  const { label, settings } = params;
  const attempts = settings.maxRetries + 1;
  const progress = { passed: false };
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) throw abortError(label, signal.reason, `before attempt ${attempt}`);
    const where = `attempt ${attempt} of ${attempts}`;
    const end: AttemptEnd = yield* streamAttempt(client, body, signal, params, where, progress);
    if (end.kind === 'done') return;
    const { outcome } = end;
    if (outcome.kind === 'value') return;
    if (outcome.kind === 'fail' || progress.passed || attempt >= attempts) throw outcome.error;
    const { retryBaseDelayMs, retryMaxDelayMs } = settings;
    const wait = retryDelayMs(attempt, retryBaseDelayMs, retryMaxDelayMs, outcome.retryAfterMs);
    if (!(await sleep(wait, signal))) {
      throw abortError(label, signal.reason, `while waiting to retry after attempt ${attempt}`);
    }
  }
}

/** Why our side ended an attempt, when it did. */
type Stop = 'first_item' | 'gap' | 'caller';

async function* streamAttempt<T>(
  client: UpstreamClient,
  body: string,
  signal: CancelSignal,
  params: StreamParams<T>,
  where: string,
  progress: { passed: boolean },
): AsyncGenerator<T, AttemptEnd, undefined> {
  const { label, timeouts } = params;
  const attempt = new Cancellation();
  let stopped: Stop | undefined;
  const stop = (why: Stop) => {
    stopped ??= why;
    attempt.abort(why === 'caller' ? signal.reason : new Error(`attempt stopped: ${why}`));
  };
  const onAbort = () => stop('caller');
  signal.addEventListener('abort', onAbort, { once: true });
  let timer = setTimeout(() => stop('first_item'), timeouts.firstItemMs);
  const failed = (outcome: Outcome<never>): AttemptEnd => ({ kind: 'failed', outcome });
  const stoppedOutcome = (why: Stop): Outcome<never> => {
    if (why === 'caller') {
      return judgeFailure({ kind: 'aborted', reason: signal.reason }, { label, where });
    }
    const limit = why === 'gap' ? `${timeouts.gapMs}ms between tokens` : 'the first token';
    const ms = why === 'gap' ? '' : ` within ${timeouts.firstItemMs}ms`;
    const error = new CoreError('core_timeout', `${label}: waited for ${limit}${ms} (${where})`);
    return { kind: 'retry', error };
  };
  try {
    const opened = await client.open(body, attempt);
    if (!opened.ok) {
      if (stopped) return failed(stoppedOutcome(stopped));
      return failed(judgeFailure(opened.failure, { label, where }));
    }
    const { response } = opened;
    const refused = judgeStatus<never>(response.status, response.headers, { where, ...params });
    if (refused) return failed(refused);
    const decoder = params.decoder();
    const utf8 = new TextDecoder('utf-8');
    const pass = (reading: BodyReading<readonly T[]>) => {
      if (!reading.ok) {
        const message = `${label}: unusable stream: ${reading.problem} (${where})`;
        return {
          problem: failed({ kind: 'retry', error: new CoreError('core_unavailable', message) }),
        };
      }
      return { items: reading.value };
    };
    try {
      for await (const chunk of response.body) {
        const read = pass(decoder.push(utf8.decode(chunk, { stream: true })));
        if (read.problem) return read.problem;
        for (const item of read.items) {
          clearTimeout(timer);
          progress.passed = true;
          yield item;
          timer = setTimeout(() => stop('gap'), timeouts.gapMs);
        }
      }
    } catch (error) {
      if (stopped) return failed(stoppedOutcome(stopped));
      const message = `${label}: the stream broke off (${where})`;
      return failed({
        kind: 'retry',
        error: new CoreError('core_unavailable', message, { cause: error }),
      });
    }
    const last = pass(decoder.end());
    if (last.problem) return last.problem;
    for (const item of last.items) {
      progress.passed = true;
      yield item;
    }
    return { kind: 'done' };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    // Ended early (the consumer stopped, a failure): the upstream request goes at once.
    if (!attempt.aborted) attempt.abort(new Error('attempt ended'));
  }
}
