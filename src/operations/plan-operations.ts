/**
 * @module operations/plan-operations
 * The configured plans as operators see them, and what a plan allows a key. A key whose
 * plan was removed from PLAUDER_PLANS has no limits (null): views show that instead of
 * failing (authentication refuses such a key; see routes/authenticate.ts).
 */
import type { Plans } from '../plans/plans.js';

export interface PlanView {
  readonly name: string;
  /** Requests per month. */
  readonly limit: number;
  /** Requests per clock minute; null = no per-minute limit. */
  readonly perMinute: number | null;
  /** Token budgets and the default output cap; null when the plan has none. */
  readonly tokens: {
    readonly perMonth: number | null;
    readonly perMinute: number | null;
    readonly perAnswer: number;
  } | null;
}

export function listPlans(plans: Plans): PlanView[] {
  return [...plans].map(([name, plan]) => ({
    name,
    limit: plan.monthly,
    perMinute: plan.perMinute ?? null,
    tokens:
      plan.tokens === undefined
        ? null
        : {
            perMonth: plan.tokens.monthly ?? null,
            perMinute: plan.tokens.perMinute ?? null,
            perAnswer: plan.tokens.answer,
          },
  }));
}

export interface PlanUsage {
  readonly used: number;
  readonly limit: number | null;
  readonly remaining: number | null;
  /** This clock minute against the per-minute limit; null when the plan has none. */
  readonly perMinute: { limit: number; used: number; remaining: number } | null;
}

/** Tokens of a month against the plan's monthly token budget (null: none, and none used). */
export function tokensUnderPlan(
  plans: Plans,
  planName: string,
  used: number,
): { used: number; limit: number | null; remaining: number | null } | null {
  const limit = plans.get(planName)?.tokens?.monthly ?? null;
  if (limit === null && used === 0) return null;
  return { used, limit, remaining: limit === null ? null : Math.max(0, limit - used) };
}

/** `used` requests this month and `minuteUsed` this minute, against the plan of `planName`. */
export function usageUnderPlan(
  plans: Plans,
  planName: string,
  used: number,
  minuteUsed: number,
): PlanUsage {
  const plan = plans.get(planName);
  const limit = plan?.monthly ?? null;
  const perMinute = plan?.perMinute;
  return {
    used,
    limit,
    remaining: limit === null ? null : Math.max(0, limit - used),
    perMinute:
      perMinute === undefined
        ? null
        : { limit: perMinute, used: minuteUsed, remaining: Math.max(0, perMinute - minuteUsed) },
  };
}
