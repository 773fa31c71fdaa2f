/**
 * @module quota/quota-service
 * A key's limits: the monthly quota and, when its plan has one, the per-minute limit.
 * One request is reserved atomically against both before the core runs and refunded
 * when the core fails. The month is always the one the request was admitted in, the
 * minute the clock minute it was admitted in, the day the day it was admitted in (the
 * day's count is written with the month's, and refunded with it). A reservation that brings the month to
 * 80 % or 100 % records `quota.warning` / `quota.exhausted` in the same transaction.
 */

import type { EventOutbox } from '../events/event-outbox.js';
import { warningAt } from '../events/events.js';
import type { TokenBudget } from '../plans/plans.js';
import type { CountedUnit, UsageRepository } from '../storage/repositories/usage-repository.js';
import type { Writes } from '../storage/unit-of-work.js';
import { daysOfMonthUpTo, type MonthWindow, type MonthWindows } from './month-window.js';
import { createRefundQueue } from './refund-queue.js';
import type { TokenBudgets, TokenState } from './token-budgets.js';

/** The key as its limits need it (the name and plan go into events). */
export interface QuotaKey {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  /** Requests per month. */
  readonly limit: number;
  /** Requests per clock minute; undefined = none. */
  readonly minuteLimit: number | undefined;
  /** The plan's token budgets; absent = none (docs/quota-and-limits.md, "Token budgets"). */
  readonly tokens?: TokenBudget | undefined;
}

interface MinuteState {
  readonly limit: number;
  readonly used: number;
  /** The clock minute: [startMs, endMs). */
  readonly startMs: number;
  readonly endMs: number;
}

export interface QuotaState {
  readonly limit: number;
  readonly used: number;
  readonly window: MonthWindow;
  readonly nowMs: number;
  /** The per-minute limit's state; undefined when the plan has none. */
  readonly minute: MinuteState | undefined;
  /** The token budgets' state, when the plan has any. */
  readonly tokens?: TokenState | undefined;
}

export type Reservation =
  | {
      readonly ok: true;
      readonly state: QuotaState;
      /**
       * Gives the unit back. `hangUp`: a turn whose core was asked and whose client left
       * before any reply reached it: the minute's unit is kept (the minute's limit bounds the
       * core work a key can cause, whatever it receives), and the month's is given back only
       * within the key's free hang-ups of the minute (docs/quota-and-limits.md, "Hang-ups").
       */
      refund(options?: RefundOptions): Promise<void>;
    }
  | {
      readonly ok: false;
      /** `month`: quota_exceeded; `minute`: rate_limited. */
      readonly refusedBy: 'month' | 'minute';
      readonly state: QuotaState;
    };

interface RefundOptions {
  readonly hangUp?: boolean;
}

export interface MonthUsage {
  /** `YYYY-MM` in the quota time zone. */
  readonly month: string;
  readonly used: number;
}

export interface DayUsage {
  /** `YYYY-MM-DD` in the quota time zone. */
  readonly date: string;
  readonly used: number;
}

/**
 * Who holds the unit a request reserves, across processes (an Idempotency-Key's claim): a
 * unit it inherited from a request that died is adopted instead of reserving another; a new
 * one is recorded with the holder in the reservation's transaction; a refund goes through
 * the holder, so that it gives the unit back only while it still holds it.
 */
interface UnitHolder {
  adopt(): CountedUnit | undefined;
  holding(unit: CountedUnit): Writes;
  refund(options?: RefundOptions): Promise<void>;
}

export interface QuotaService {
  /**
   * Counts one request if there is room. `holder`: who holds the unit (see UnitHolder); a
   * unit it adopts is admitted without counting again.
   */
  reserve(key: QuotaKey, nowMs: number, holder?: UnitHolder): Promise<Reservation>;
  current(
    key: Pick<QuotaKey, 'id' | 'limit' | 'minuteLimit' | 'tokens'>,
    nowMs: number,
  ): Promise<QuotaState>;
  /**
   * The state, and the limit a request would find reached now (undefined: none), without
   * counting anything: for a request refused for another reason after the limits' rows.
   */
  check(
    key: Pick<QuotaKey, 'id' | 'limit' | 'minuteLimit' | 'tokens'>,
    nowMs: number,
  ): Promise<{ readonly state: QuotaState; readonly refusedBy: 'month' | 'minute' | undefined }>;
  monthOf(nowMs: number): MonthWindow;
  /** Refunds not yet written because the database did not answer (retried in the background). */
  pendingRefunds(): number;
  /** Last attempt for pending refunds, at shutdown; returns how many could not be written. */
  flushRefunds(): Promise<number>;
  /** Requests of a key in the `count` months ending with the current one, oldest first. */
  history(keyId: string, nowMs: number, count: number): Promise<MonthUsage[]>;
  /** Requests of a key on each day of the current month up to today, the 1st first. */
  daysOfMonth(keyId: string, nowMs: number): Promise<DayUsage[]>;
}

const MINUTE_MS = 60_000;

/** The clock minute containing `nowMs`, as a number (Unix ms / 60 000). */
export function minuteOf(nowMs: number): number {
  return Math.floor(nowMs / MINUTE_MS);
}

export interface QuotaOptions {
  /** Hang-ups before delivery per key and minute refunded to the month (PLAUDER_FREE_HANGUPS). */
  readonly freeHangups: number;
  /** The token budgets, whose state the quota's state shows beside the requests. */
  readonly tokens?: TokenBudgets;
}

export function createQuotaService(
  usage: UsageRepository,
  windows: MonthWindows,
  outbox: EventOutbox,
  options: QuotaOptions,
): QuotaService {
  const refunds = createRefundQueue((keyId, month, minute, day, free) =>
    free !== undefined && minute !== undefined && day !== undefined
      ? usage.hangUp(keyId, { month, minute, day }, free)
      : usage.refund(keyId, month, minute, day),
  );

  const stateOf = (
    key: Pick<QuotaKey, 'limit' | 'minuteLimit'>,
    window: MonthWindow,
    nowMs: number,
    used: number,
    minuteUsed: number,
  ): QuotaState => ({
    limit: key.limit,
    used,
    window,
    nowMs,
    minute:
      key.minuteLimit === undefined
        ? undefined
        : {
            limit: key.minuteLimit,
            used: minuteUsed,
            startMs: minuteOf(nowMs) * MINUTE_MS,
            endMs: (minuteOf(nowMs) + 1) * MINUTE_MS,
          },
  });

  const check: QuotaService['check'] = async (key, nowMs) => {
    const window = windows.at(nowMs);
    const [{ used, minuteUsed, refusedBy }, tokens] = await Promise.all([
      usage.standing({
        keyId: key.id,
        month: window.month,
        limit: key.limit,
        minute: minuteOf(nowMs),
        minuteLimit: key.minuteLimit,
      }),
      key.tokens === undefined || options.tokens === undefined
        ? undefined
        : options.tokens.state({ id: key.id, name: '', plan: '', tokens: key.tokens }, nowMs),
    ]);
    const state = stateOf(key, window, nowMs, used, minuteUsed);
    return { state: tokens === undefined ? state : { ...state, tokens }, refusedBy };
  };
  const current: QuotaService['current'] = async (key, nowMs) => (await check(key, nowMs)).state;

  return {
    async reserve(key, nowMs, holder) {
      // A request that died after reserving was never answered: its retry is that unit.
      if (holder?.adopt() !== undefined) {
        const refund = (how?: RefundOptions) => holder.refund(how);
        return { ok: true, state: await current(key, nowMs), refund };
      }
      const window = windows.at(nowMs);
      const { day } = windows.dayAt(nowMs);
      const minute = minuteOf(nowMs);
      const warnAt = warningAt(key.limit);
      const record = (used: number): Writes => {
        const data = {
          keyId: key.id,
          name: key.name,
          plan: key.plan,
          month: window.month,
          used,
          limit: key.limit,
        };
        return (work) => {
          if (used === warnAt) outbox.record({ type: 'quota.warning', data }, nowMs)(work);
          if (used === key.limit) outbox.record({ type: 'quota.exhausted', data }, nowMs)(work);
        };
      };
      const outcome = await usage.reserve({
        keyId: key.id,
        month: window.month,
        day,
        limit: key.limit,
        minute,
        minuteLimit: key.minuteLimit,
        watch: outbox.enabled ? [warnAt, key.limit] : [],
        record,
        also: holder?.holding({ month: window.month, minute, day }),
      });
      const state = stateOf(key, window, nowMs, outcome.used, outcome.minuteUsed);
      if (!outcome.admitted) return { ok: false, refusedBy: outcome.refusedBy, state };
      if (outbox.enabled && (outcome.used === warnAt || outcome.used === key.limit)) {
        outbox.committed();
      }
      return {
        ok: true,
        state,
        // A claim's unit goes back with the claim, which recorded it.
        refund: (how) =>
          holder !== undefined
            ? holder.refund(how)
            : how?.hangUp
              ? refunds.refund(key.id, window.month, minute, day, options.freeHangups)
              : refunds.refund(key.id, window.month, minute, day),
      };
    },
    current,
    check,
    monthOf: (nowMs) => windows.at(nowMs),
    pendingRefunds: () => refunds.pending(),
    flushRefunds: () => refunds.flush(),
    async history(keyId, nowMs, count) {
      const used = new Map((await usage.forKey(keyId)).map((row) => [row.month, row.used]));
      // Months without a counter row had no requests: the series has no gaps.
      return monthsEndingWith(windows.at(nowMs).month, count).map((month) => ({
        month,
        used: used.get(month) ?? 0,
      }));
    },
    async daysOfMonth(keyId, nowMs) {
      const days = daysOfMonthUpTo(windows.dayAt(nowMs).day);
      const first = days[0];
      const last = days.at(-1);
      if (first === undefined || last === undefined) return [];
      const used = new Map(
        (await usage.days(keyId, first, last)).map((row) => [row.day, row.used]),
      );
      // Days without a row had no requests.
      return days.map((date) => ({ date, used: used.get(date) ?? 0 }));
    },
  };
}

/** `monthsEndingWith('2026-02', 3)` → `['2025-12', '2026-01', '2026-02']`. */
function monthsEndingWith(month: string, count: number): string[] {
  const [year = 0, monthNumber = 1] = month.split('-').map(Number);
  const last = year * 12 + (monthNumber - 1);
  const months: string[] = [];
  for (let index = last - count + 1; index <= last; index++) {
    const y = Math.floor(index / 12);
    months.push(`${String(y).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`);
  }
  return months;
}

/**
 * `RateLimit-Policy` / `RateLimit` (IETF draft-11: one list item per policy, the monthly
 * one first, then the minute when the plan has one) and the common `X-RateLimit-*`
 * headers, which describe the monthly policy.
 */
export function rateLimitHeaders(state: QuotaState): Record<string, string> {
  const remaining = Math.max(0, state.limit - state.used);
  const windowSeconds = Math.round((state.window.endMs - state.window.startMs) / 1000);
  const resetSeconds = secondsUntil(state.window.endMs, state.nowMs);
  let policy = `"monthly";q=${state.limit};w=${windowSeconds}`;
  let limits = `"monthly";r=${remaining};t=${resetSeconds}`;
  const { minute } = state;
  if (minute !== undefined) {
    policy += `, "minute";q=${minute.limit};w=${MINUTE_MS / 1000}`;
    limits += `, "minute";r=${Math.max(0, minute.limit - minute.used)};t=${secondsUntil(minute.endMs, state.nowMs)}`;
  }
  // Token budgets follow the request limits (docs/quota-and-limits.md, "Token budgets").
  const tokens = state.tokens;
  if (tokens?.monthly !== undefined) {
    policy += `, "tokens-monthly";q=${tokens.monthly.limit};w=${windowSeconds}`;
    limits += `, "tokens-monthly";r=${Math.max(0, tokens.monthly.limit - tokens.monthly.used)};t=${resetSeconds}`;
  }
  if (tokens?.minute !== undefined) {
    policy += `, "tokens-minute";q=${tokens.minute.limit};w=${MINUTE_MS / 1000}`;
    limits += `, "tokens-minute";r=${Math.max(0, tokens.minute.limit - tokens.minute.used)};t=${secondsUntil(tokens.minute.endMs, state.nowMs)}`;
  }
  return {
    'ratelimit-policy': policy,
    ratelimit: limits,
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(Math.floor(state.window.endMs / 1000)),
  };
}

/** `Retry-After` of a refusal: seconds until the refusing window frees up (at least 1). */
export function retryAfterSeconds(
  state: QuotaState,
  refusedBy: 'month' | 'minute' | 'tokens-month' | 'tokens-minute',
): number {
  const minuteEnd =
    refusedBy === 'tokens-minute'
      ? state.tokens?.minute?.endMs
      : refusedBy === 'minute'
        ? state.minute?.endMs
        : undefined;
  const endMs = minuteEnd ?? state.window.endMs;
  return Math.max(1, secondsUntil(endMs, state.nowMs));
}

function secondsUntil(endMs: number, nowMs: number): number {
  return Math.max(0, Math.ceil((endMs - nowMs) / 1000));
}
