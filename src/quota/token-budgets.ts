/**
 * @module quota/token-budgets
 * A plan's token budgets (docs/quota-and-limits.md, "Token budgets"): a turn reserves its
 * worst case (input estimate + output cap) against the month's and the minute's budget
 * before the core runs, and settles it afterwards to what it cost: the upstream's reported
 * usage, an estimate, nothing when nothing was delivered. A reservation is recorded with an
 * expiry; one whose instance died before settling is released by the sweep of whichever
 * instance runs next (`sweep`, at start and on a timer).
 */
import { randomUUID } from 'node:crypto';
import type { EventOutbox } from '../events/event-outbox.js';
import { warningAt } from '../events/events.js';
import type { TokenBudget } from '../plans/plans.js';
import type {
  OpenTokenReservation,
  TokenLimitsAt,
  TokenUsageRepository,
} from '../storage/repositories/token-usage-repository.js';
import type { Writes } from '../storage/unit-of-work.js';
import type { MonthWindows } from './month-window.js';
import { minuteOf, type QuotaKey } from './quota-service.js';

const MINUTE_MS = 60_000;

/** A key's token budgets as the headers and `/api/usage` show them. */
export interface TokenState {
  readonly monthly: { readonly limit: number; readonly used: number } | undefined;
  readonly minute:
    | { readonly limit: number; readonly used: number; readonly endMs: number }
    | undefined;
}

/** A reserved worst case, until the turn says what it cost. */
export interface OpenTokens {
  /** Reserved tokens. */
  readonly reserved: number;
  /**
   * Replaces the reservation by `tokens` (0 releases it); only the first call counts. A
   * settle the database refuses is logged and left to the sweep, which releases it.
   */
  settle(tokens: number): Promise<void>;
}

type TokenReservation =
  | { readonly ok: true; readonly state: TokenState | undefined; readonly tokens: OpenTokens }
  | { readonly ok: false; readonly refusedBy: 'month' | 'minute'; readonly state: TokenState };

/** The key as its token budgets need it. */
type BudgetKey = Pick<QuotaKey, 'id' | 'name' | 'plan'> & {
  readonly tokens?: TokenBudget | undefined;
};

export interface TokenBudgets {
  /** Reserves `tokens` against the key's budgets; a key without budgets is admitted as is. */
  reserve(key: BudgetKey, nowMs: number, tokens: number): Promise<TokenReservation>;
  /** The key's budgets now; undefined when its plan has none. */
  state(key: BudgetKey, nowMs: number): Promise<TokenState | undefined>;
  /** Releases reservations past their expiry; returns how many. */
  sweep(nowMs: number): Promise<number>;
  /** Settled and reserved tokens of a key per month, oldest first. */
  forKey(keyId: string): Promise<readonly { month: string; used: number }[]>;
  /** Reservations still open, of one key or of all. */
  open(keyId?: string): Promise<number>;
  /** Settled and reserved tokens of every key in a month. */
  forMonth(month: string): Promise<ReadonlyMap<string, number>>;
}

export interface TokenBudgetOptions {
  /**
   * How long a reservation may stay open before a sweep releases it: longer than any turn
   * (the core's deadline and the time to record its answer).
   */
  readonly reservationMs: number;
  /** Told of a settle that could not be written (the sweep releases it later). */
  readonly onSettleFailed?: (error: unknown) => void;
}

export function createTokenBudgets(
  repository: TokenUsageRepository,
  windows: MonthWindows,
  outbox: EventOutbox,
  options: TokenBudgetOptions,
): TokenBudgets {
  const limitsAt = (key: BudgetKey, budget: TokenBudget, nowMs: number): TokenLimitsAt => ({
    keyId: key.id,
    month: windows.at(nowMs).month,
    minute: minuteOf(nowMs),
    limit: budget.monthly,
    minuteLimit: budget.perMinute,
  });
  const stateOf = (
    budget: TokenBudget,
    nowMs: number,
    used: number,
    minuteUsed: number,
  ): TokenState => ({
    monthly: budget.monthly === undefined ? undefined : { limit: budget.monthly, used },
    minute:
      budget.perMinute === undefined
        ? undefined
        : { limit: budget.perMinute, used: minuteUsed, endMs: (minuteOf(nowMs) + 1) * MINUTE_MS },
  });

  /** `quota.warning` / `quota.exhausted` with `"unit": "tokens"`, once per key and month. */
  const events = (
    key: BudgetKey,
    budget: TokenBudget,
    month: string,
    tokens: number,
    nowMs: number,
  ) => {
    const limit = budget.monthly;
    if (!outbox.enabled || limit === undefined) return undefined;
    const warnAt = warningAt(limit);
    // Exhausted: a turn with the plan's output cap no longer fits.
    const exhaustedAt = Math.max(1, limit - budget.answer + 1);
    return (used: number): Writes | undefined => {
      const before = used - tokens;
      const data = {
        keyId: key.id,
        name: key.name,
        plan: key.plan,
        month,
        used,
        limit,
        unit: 'tokens' as const,
      };
      const crossed = (at: number) => before < at && used >= at;
      if (!crossed(warnAt) && !crossed(exhaustedAt)) return undefined;
      return (work) => {
        if (crossed(warnAt)) outbox.record({ type: 'quota.warning', data }, nowMs)(work);
        if (crossed(exhaustedAt)) outbox.record({ type: 'quota.exhausted', data }, nowMs)(work);
      };
    };
  };

  const settler = (reservation: OpenTokenReservation): OpenTokens => {
    let settled = false;
    return {
      reserved: reservation.tokens,
      async settle(tokens) {
        if (settled) return;
        settled = true;
        try {
          await repository.settle(reservation, Math.max(0, Math.round(tokens)));
        } catch (error) {
          options.onSettleFailed?.(error);
        }
      },
    };
  };

  const NOT_BUDGETED: OpenTokens = { reserved: 0, settle: async () => {} };

  return {
    async reserve(key, nowMs, tokens) {
      const budget = key.tokens;
      if (
        budget === undefined ||
        (budget.monthly === undefined && budget.perMinute === undefined)
      ) {
        return { ok: true, state: undefined, tokens: NOT_BUDGETED };
      }
      const limits = limitsAt(key, budget, nowMs);
      const id = randomUUID();
      const record = events(key, budget, limits.month, tokens, nowMs);
      const outcome = await repository.reserve({
        ...limits,
        id,
        tokens,
        expiresAt: nowMs + options.reservationMs,
        ...(record === undefined ? {} : { record }),
      });
      const state = stateOf(budget, nowMs, outcome.used, outcome.minuteUsed);
      if (!outcome.admitted) return { ok: false, refusedBy: outcome.refusedBy, state };
      if (outbox.enabled) outbox.committed();
      const open = { id, keyId: key.id, month: limits.month, minute: limits.minute, tokens };
      return { ok: true, state, tokens: settler(open) };
    },

    async state(key, nowMs) {
      const budget = key.tokens;
      if (
        budget === undefined ||
        (budget.monthly === undefined && budget.perMinute === undefined)
      ) {
        return undefined;
      }
      const now = await repository.standing(limitsAt(key, budget, nowMs), 0);
      return stateOf(budget, nowMs, now.used, now.minuteUsed);
    },

    async sweep(nowMs) {
      let released = 0;
      for (;;) {
        const expired = await repository.expired(nowMs, 100);
        for (const reservation of expired) {
          if (await repository.settle(reservation, 0)) released++;
        }
        if (expired.length < 100) return released;
      }
    },

    async forKey(keyId) {
      return (await repository.forKey(keyId)).map((row) => ({ month: row.month, used: row.used }));
    },

    open: (keyId) => repository.open(keyId),

    async forMonth(month) {
      return new Map((await repository.forMonth(month)).map((row) => [row.keyId, row.used]));
    },
  };
}
