/**
 * @module core/http/http-stream
 * A streamed POST to the upstream: the response body is read as it arrives and decoded into
 * items (an adapter's deltas), each passed on at once. The same failure mapping as a plain
 * POST (src/core/http/http-upstream.ts), with these differences:
 * - the attempt's time limit is the time to the first item (`firstItemMs`), and then the
 *   longest gap between two items (`gapMs`), not the whole reply;
 * - a failed attempt moves the turn to the next upstream (or a retry, src/core/http/failover.ts)
 *   only while no item has been passed on: after that the reply cannot be taken back, so the
 *   failure ends the stream.
 * Leaving the loop early (the consumer stops iterating) or the caller's signal aborts the
 * upstream request at once.
 *
 * The body is pushed to us by undici's handler API and the items wait in a queue for the
 * consumer's `next()`: one promise per item, no Readable, no async generators and no timer
 * per item (the first-item timer, then one gap timer refreshed per item), because reading
 * the stream through `request()` and nested generators cost far more CPU per reply.
 */

import { TextDecoder } from 'node:util';
import type { CancelSignal } from '../../util/cancellation.js';
import { CoreError, type TokenUsage } from '../core-adapter.js';
import {
  abortError,
  type BodyReading,
  judgeFailure,
  judgeStatus,
  type Outcome,
} from './attempt-judging.js';
import { type BodyFor, bodyOf, type Member, type TurnRoute } from './failover.js';
import { sleep } from './retry-policy.js';
import type { AttemptFailure, StreamControl, UpstreamResponse } from './upstream-client.js';
import type { AttemptWatch, Describe, UpstreamObserver } from './upstream-observer.js';

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
  readonly timeouts: StreamTimeouts;
  readonly decoder: () => StreamDecoder<T>;
  readonly observer: UpstreamObserver | undefined;
  readonly describe: Describe<T> | undefined;
}

export function streamFromUpstream<T>(
  route: TurnRoute,
  body: BodyFor,
  signal: CancelSignal,
  params: StreamParams<T>,
): AsyncIterable<T> {
  return new UpstreamItems(route, body, signal, params);
}

/** Items waiting beyond this many pause the socket until the consumer has caught up. */
const HIGH_WATER_ITEMS = 64;

/**
 * Why an attempt's request is aborted once it is over or failed. One error for all: a new
 * Error per stream (and its stack) was a tenth of a streamed reply's CPU at concurrency 1.
 */
const ATTEMPT_ENDED = new Error('attempt ended');

/** Why our side ended an attempt. */
type Stop = 'first_item' | 'gap' | 'caller' | 'consumer';

interface Waiting<T> {
  resolve(result: IteratorResult<T, undefined>): void;
  reject(error: unknown): void;
}

/**
 * The items of one streamed reply, over as many attempts as the settings allow. A class, not
 * an object literal: see test/house/object-literals.test.ts.
 */
class UpstreamItems<T> implements AsyncIterableIterator<T, undefined> {
  private readonly queue: T[] = [];
  private head = 0;
  private waiting: Waiting<T> | undefined;
  /** Set once the stream is over: `true` when it ended well, else the error to throw. */
  private ended: { readonly error?: CoreError } | undefined;
  /** An item was passed on: from then on a failure ends the stream, never a retry. */
  private passed = false;
  /** The attempt under way has its response's status and headers. */
  private responded = false;
  /** The upstream of the attempt under way (or waited for), until the attempt ends. */
  private member: Member | undefined;
  private watch: AttemptWatch | undefined;
  private status: number | undefined;
  private usage: TokenUsage | undefined;
  private responseModel: string | undefined;
  private itemsOfAttempt = 0;
  private control: StreamControl | undefined;
  private decoder: StreamDecoder<T> | undefined;
  private utf8: TextDecoder | undefined;
  private timer: NodeJS.Timeout | undefined;
  private gapTimer = false;
  private stopped: Stop | undefined;
  private paused = false;
  private readonly onAbort = () => this.stop('caller');

  constructor(
    private readonly route: TurnRoute,
    private readonly body: BodyFor,
    private readonly signal: CancelSignal,
    private readonly params: StreamParams<T>,
  ) {
    signal.addEventListener('abort', this.onAbort, { once: true });
    this.start();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.head < this.queue.length) return Promise.resolve(this.take());
    if (this.ended) {
      return this.ended.error
        ? Promise.reject(this.ended.error)
        : Promise.resolve({ done: true, value: undefined });
    }
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  /** The consumer stopped early (a `break` in `for await`): the upstream request goes at once. */
  return(): Promise<IteratorResult<T, undefined>> {
    if (!this.ended) this.stop('consumer');
    return Promise.resolve({ done: true, value: undefined });
  }

  private take(): IteratorResult<T, undefined> {
    const value = this.queue[this.head] as T;
    this.head++;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    }
    if (this.paused && this.queue.length - this.head < HIGH_WATER_ITEMS / 2) {
      this.paused = false;
      this.control?.resume();
      if (this.control) this.restartGapTimer();
    }
    return { done: false, value };
  }

  private get where(): string {
    return this.route.where;
  }

  /** The next attempt: on the upstream the route names, after its wait. */
  private start(): void {
    const { label } = this.params;
    // No attempt starts once the caller is gone (docs/contract.md, "Several upstreams").
    if (this.signal.aborted) {
      const when = `before attempt ${this.route.attempt + 1}`;
      this.finish(abortError(label, this.signal.reason, when));
      return;
    }
    const step = this.route.next();
    if (step instanceof CoreError) {
      this.finish(step);
      return;
    }
    this.member = step.member;
    if (step.waitMs <= 0) {
      this.begin(step.member);
      return;
    }
    const after = this.route.attempt - 1;
    void sleep(step.waitMs, this.signal).then((waited) => {
      if (this.ended) return;
      if (waited) this.begin(step.member);
      else {
        const when = `while waiting to retry after attempt ${after}`;
        this.finish(abortError(label, this.signal.reason, when));
      }
    });
  }

  private begin(member: Member): void {
    const { timeouts, observer } = this.params;
    this.decoder = this.params.decoder();
    this.utf8 = new TextDecoder('utf-8');
    this.gapTimer = false;
    this.responded = false;
    this.status = undefined;
    this.usage = undefined;
    this.responseModel = undefined;
    this.itemsOfAttempt = 0;
    this.watch = observer?.attempt({ ...member.start, streamed: true });
    this.timer = setTimeout(() => this.stop('first_item'), timeouts.firstItemMs);
    const body = bodyOf(this.body, member.index);
    this.control = member.client.stream(body, this, this.watch?.headers);
  }

  /** The attempt under way ended: its breaker and its observer are told how. */
  private attemptEnded(outcome: Outcome<never> | 'ok' | 'ours', errorType?: string): void {
    const member = this.member;
    if (member === undefined) return;
    this.member = undefined;
    if (outcome === 'ok') this.route.succeeded(member);
    else if (outcome === 'ours') this.route.released(member);
    else if (outcome.kind !== 'value') this.route.failed(member, outcome);
    const watch = this.watch;
    this.watch = undefined;
    if (watch === undefined) return;
    watch.end({
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(errorType === undefined ? {} : { errorType }),
      ...(this.usage === undefined ? {} : { usage: this.usage }),
      ...(this.responseModel === undefined ? {} : { responseModel: this.responseModel }),
    });
  }

  // StreamReader: what the upstream client reports of the attempt under way.

  onStart(status: number, headers: UpstreamResponse['headers']): void {
    this.responded = true;
    this.status = status;
    const { label, hints } = this.params;
    const refused = judgeStatus<never>(status, headers, { label, hints, where: this.where });
    if (refused) this.attemptFailed(refused, String(status));
  }

  onData(chunk: Buffer): void {
    const text = this.utf8?.decode(chunk, { stream: true }) ?? '';
    const reading = this.decoder?.push(text);
    if (reading) this.accept(reading);
  }

  onEnd(): void {
    const reading = this.decoder?.end();
    if (reading && !this.accept(reading)) return;
    // The request is complete: nothing to abort.
    this.control = undefined;
    this.clearTimer();
    this.attemptEnded('ok');
    this.finish(undefined);
  }

  onFailure(failure: AttemptFailure): void {
    const { label } = this.params;
    if (failure.kind === 'connection' && this.responded) {
      const message = `${label}: the stream broke off (${this.where})`;
      const error = new CoreError('core_unavailable', message, { cause: failure.cause });
      this.attemptFailed({ kind: 'retry', error }, 'stream_broken');
      return;
    }
    const errorType = failure.kind === 'aborted' ? 'cancelled' : failure.kind;
    this.attemptFailed(judgeFailure(failure, { label, where: this.where }), errorType);
  }

  /** Queues what the decoder read; false when the body was unusable (the attempt failed). */
  private accept(reading: BodyReading<readonly T[]>): boolean {
    if (!reading.ok) {
      const message = `${this.params.label}: unusable stream: ${reading.problem} (${this.where})`;
      const error = new CoreError('core_unavailable', message);
      this.attemptFailed({ kind: 'retry', error }, 'invalid_response');
      return false;
    }
    const items = reading.value;
    if (items.length === 0) return true;
    this.passed = true;
    if (this.watch) this.noteItems(items);
    this.restartGapTimer();
    const waiting = this.waiting;
    let first = 0;
    if (waiting && this.head === this.queue.length) {
      this.waiting = undefined;
      first = 1;
      waiting.resolve({ done: false, value: items[0] as T });
    }
    for (let i = first; i < items.length; i++) this.queue.push(items[i] as T);
    if (!this.paused && this.queue.length - this.head >= HIGH_WATER_ITEMS) {
      this.paused = true;
      this.control?.pause();
      // The upstream is silent because we stopped reading it (a slow client): not a gap.
      this.clearTimer();
      this.gapTimer = false;
    }
    return true;
  }

  private restartGapTimer(): void {
    // Paused for a slow consumer: the silence is ours (resuming restarts the timer).
    if (this.paused) return;
    if (this.gapTimer) {
      this.timer?.refresh();
      return;
    }
    this.clearTimer();
    this.gapTimer = true;
    this.timer = setTimeout(() => this.stop('gap'), this.params.timeouts.gapMs);
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Our side ends the attempt under way: a timeout, the caller's signal, or the consumer. */
  private stop(why: Stop): void {
    if (this.ended || this.stopped) return;
    this.stopped = why;
    const underWay = this.control !== undefined;
    const reason = why === 'caller' ? this.signal.reason : new Error(`attempt stopped: ${why}`);
    this.control?.abort(reason instanceof Error ? reason : new Error('aborted by the caller'));
    this.control = undefined;
    this.clearTimer();
    if (why === 'consumer' || why === 'caller') this.attemptEnded('ours', 'cancelled');
    if (why === 'consumer') {
      this.finish(undefined);
      return;
    }
    const { label, timeouts } = this.params;
    if (why === 'caller') {
      const when = underWay
        ? `during ${this.where}`
        : `while waiting to retry after attempt ${this.route.attempt}`;
      this.finish(abortError(label, this.signal.reason, when));
      return;
    }
    const limit = why === 'gap' ? `${timeouts.gapMs}ms between tokens` : 'the first token';
    const ms = why === 'gap' ? '' : ` within ${timeouts.firstItemMs}ms`;
    const message = `${label}: waited for ${limit}${ms} (${this.where})`;
    this.stopped = undefined;
    const error = new CoreError('core_timeout', message);
    this.attemptFailed({ kind: 'retry', error }, 'timeout');
  }

  /**
   * The attempt under way failed: the turn moves on (the next upstream, or a retry) while
   * nothing was passed on, else it ends.
   */
  private attemptFailed(outcome: Outcome<never>, errorType: string): void {
    this.clearTimer();
    this.control?.abort(ATTEMPT_ENDED);
    this.control = undefined;
    this.attemptEnded(outcome, errorType);
    if (outcome.kind === 'value') {
      this.finish(undefined);
      return;
    }
    if (outcome.kind === 'fail' || this.passed || !this.route.canRetry) {
      this.finish(outcome.error);
      return;
    }
    this.start();
  }

  /** What the observer is told of the attempt's items: the first one's time, usage, model. */
  private noteItems(items: readonly T[]): void {
    if (this.itemsOfAttempt === 0) this.watch?.firstItem();
    this.itemsOfAttempt += items.length;
    const describe = this.params.describe;
    if (describe === undefined) return;
    for (const item of items) {
      const noted = describe(item);
      if (noted?.usage) this.usage = noted.usage;
      if (noted?.responseModel) this.responseModel = noted.responseModel;
    }
  }

  /** The stream is over: well (`undefined`) or with `error`, told to a waiting `next()`. */
  private finish(error: CoreError | undefined): void {
    if (this.ended) return;
    this.ended = error ? { error } : {};
    this.clearTimer();
    // Ended while waiting to retry, or by the caller: the upstream's breaker is not blamed.
    this.attemptEnded('ours', 'cancelled');
    this.signal.removeEventListener('abort', this.onAbort);
    if (this.control) {
      this.control.abort(ATTEMPT_ENDED);
      this.control = undefined;
    }
    const waiting = this.waiting;
    if (!waiting) return;
    this.waiting = undefined;
    if (error) waiting.reject(error);
    else waiting.resolve({ done: true, value: undefined });
  }
}
