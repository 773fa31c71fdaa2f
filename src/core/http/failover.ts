/**
 * @module core/http/failover
 * The ordered upstreams of one core and the way a turn moves through them
 * (docs/core.md, "Several upstreams"):
 * - a turn goes to the first upstream whose breaker lets it through;
 * - a retryable failure (connection, 5xx, 429, a timeout) before anything reached the client
 *   moves it to the next upstream not yet tried, at once; once each was tried it goes back to
 *   them in order, after the backoff (or the upstream's `Retry-After`, capped);
 * - for a model server (`leaveTimedOut`), an upstream whose attempt timed out (it may still
 *   be generating) is not asked again in that turn, so a slow answer is never generated twice
 *   on the same upstream;
 * - the attempts of a turn, over all upstreams, are bounded by `maxRetries + 1`;
 * - when every breaker is open the turn fails at once with `core_unavailable` and the time
 *   until the first probe, without an upstream call.
 */
import { CoreError, type UpstreamHealth } from '../core-adapter.js';
import type { Outcome } from './attempt-judging.js';
import { type BreakerSettings, CircuitBreaker } from './circuit-breaker.js';
import { retryDelayMs } from './retry-policy.js';
import { createUpstreamClient, type UpstreamClient } from './upstream-client.js';
import type { UpstreamSettings } from './upstream-config.js';
import type { AttemptStart } from './upstream-observer.js';

export interface UpstreamTarget {
  readonly url: URL;
  /** Fixed for the upstream's life; checked once, before the first request. */
  readonly headers: Readonly<Record<string, string>>;
  /** The model this upstream is asked for, for metrics and traces (empty when none). */
  readonly model?: string;
}

/** The request body, the same for every upstream or made for the upstream at a position. */
export type BodyFor = string | ((upstream: number) => string);

export function bodyOf(body: BodyFor, upstream: number): string {
  return typeof body === 'string' ? body : body(upstream);
}

/** One upstream with its pool and its breaker. */
export interface Member {
  readonly index: number;
  readonly client: UpstreamClient;
  readonly breaker: CircuitBreaker;
  /** What an observer is told of an attempt here, but whether it streams. */
  readonly start: Omit<AttemptStart, 'streamed'>;
}

/** Without a breaker setting (one upstream, e.g. a Rasa bot) it never opens. */
const NO_BREAKER: BreakerSettings = { failures: Number.POSITIVE_INFINITY, cooldownMs: 0 };

export class UpstreamPool {
  readonly members: readonly Member[];

  constructor(
    targets: readonly UpstreamTarget[],
    settings: UpstreamSettings,
    breaker: BreakerSettings | undefined,
    now: () => number,
  ) {
    this.members = targets.map((target, index) => ({
      index,
      client: createUpstreamClient(target.url, target.headers, settings.maxConnections),
      breaker: new CircuitBreaker(breaker ?? NO_BREAKER, now),
      start: {
        upstream: index,
        host: target.url.hostname,
        port: Number(target.url.port) || (target.url.protocol === 'https:' ? 443 : 80),
        model: target.model ?? '',
      },
    }));
  }

  health(): UpstreamHealth[] {
    return this.members.map(({ index, breaker }) => ({
      upstream: index,
      state: breaker.state,
      retryInSeconds: Math.ceil(breaker.waitMs() / 1000),
    }));
  }

  async close(): Promise<void> {
    await Promise.all(this.members.map((member) => member.client.close()));
  }
}

/** The next attempt of a turn: where, and how long to wait before it. */
export interface Step {
  readonly member: Member;
  readonly waitMs: number;
}

/** One turn's way through the upstreams. A class: see test/house/object-literals.test.ts. */
export class TurnRoute {
  private attempts = 0;
  /** Upstreams tried in this turn, with the `Retry-After` of their last failure. */
  private readonly tried = new Map<number, number | undefined>();
  /** Upstreams not to ask again in this turn (an attempt timed out there). */
  private readonly excluded = new Set<number>();
  private lastError: CoreError | undefined;

  constructor(
    private readonly pool: UpstreamPool,
    private readonly settings: UpstreamSettings,
    private readonly label: string,
    /** Whether an upstream whose attempt timed out is left out for the rest of the turn. */
    private readonly leaveTimedOut: boolean,
  ) {}

  get attempt(): number {
    return this.attempts;
  }

  get where(): string {
    return `attempt ${this.attempts} of ${this.settings.maxRetries + 1}`;
  }

  /**
   * The next attempt, its breaker's way taken; or the error that ends the turn (the last
   * attempt's, or `core_unavailable` with `retryAfterMs` when every breaker is open).
   */
  next(): Step | CoreError {
    if (this.attempts > this.settings.maxRetries && this.lastError) return this.lastError;
    const open = this.pool.members.filter((member) => !this.excluded.has(member.index));
    const fresh = open.find((m) => !this.tried.has(m.index) && m.breaker.acquire());
    const member = fresh ?? open.find((m) => m.breaker.acquire());
    if (member === undefined) return this.lastError ?? this.allOpen(open);
    this.attempts++;
    const { retryBaseDelayMs, retryMaxDelayMs } = this.settings;
    const retryAfter = this.tried.get(member.index);
    const waitMs = fresh
      ? 0
      : retryDelayMs(this.attempts - 1, retryBaseDelayMs, retryMaxDelayMs, retryAfter);
    return { member, waitMs };
  }

  /** The attempt at `member` answered: the breaker closes. */
  succeeded(member: Member): void {
    member.breaker.succeeded();
  }

  /** The attempt at `member` failed as `outcome` says. */
  failed(member: Member, outcome: Exclude<Outcome<unknown>, { kind: 'value' }>): void {
    this.lastError = outcome.error;
    if (outcome.kind === 'fail') {
      member.breaker.released();
      return;
    }
    member.breaker.failed();
    this.tried.set(member.index, outcome.retryAfterMs);
    if (this.leaveTimedOut && outcome.error.code === 'core_timeout') {
      this.excluded.add(member.index);
    }
  }

  /** The attempt at `member` ended for a reason of ours (the caller left or stopped). */
  released(member: Member): void {
    member.breaker.released();
  }

  /** Whether the turn may try again after a retryable failure. */
  get canRetry(): boolean {
    return this.attempts <= this.settings.maxRetries;
  }

  private allOpen(open: readonly Member[]): CoreError {
    const waits = open.map((member) => member.breaker.waitMs());
    const retryAfterMs = waits.length === 0 ? 0 : Math.min(...waits);
    const message = `${this.label}: every upstream's circuit breaker is open`;
    return new CoreError('core_unavailable', message, { retryAfterMs });
  }
}
