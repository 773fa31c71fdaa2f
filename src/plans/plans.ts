/**
 * @module plans/plans
 * Plans and their limits, from `PLAUDER_PLANS`:
 * `standard=1000/month+60/minute,plus=5000/month+300/minute`. A bare number is the monthly
 * limit (`standard=1000` is 1000 a month with no per-minute limit); every plan has one.
 */

export interface Plan {
  /** Requests per calendar month. */
  readonly monthly: number;
  /** Requests per clock minute; undefined = no per-minute limit. */
  readonly perMinute: number | undefined;
}

/** Plan name → limits. Insertion order is the documented order. */
export type Plans = ReadonlyMap<string, Plan>;

export type ParsePlansResult =
  | { readonly ok: true; readonly plans: Plans }
  | { readonly ok: false; readonly problems: readonly string[]; readonly plans?: undefined };

const PLAN_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const TERM = /^(\d+)(?:\/(month|minute))?$/;

export function parsePlans(text: string): ParsePlansResult {
  const plans = new Map<string, Plan>();
  const problems: string[] = [];
  for (const rawPart of text.split(',')) {
    const part = rawPart.trim();
    const [name = '', value = '', ...rest] = part.split('=');
    if (!PLAN_NAME.test(name) || rest.length > 0 || value === '') {
      problems.push(`"${part}" is not name=limit (lower-case name, e.g. standard=1000/month)`);
      continue;
    }
    const plan = parseLimits(name, value, problems);
    if (plans.has(name)) problems.push(`plan "${name}" is listed twice`);
    else if (plan) plans.set(name, plan);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, plans };
}

/** `1000`, `1000/month`, `1000/month+60/minute` (either order); undefined when wrong. */
function parseLimits(name: string, value: string, problems: string[]): Plan | undefined {
  const limits: { month?: number; minute?: number } = {};
  const before = problems.length;
  for (const term of value.split('+')) {
    const match = TERM.exec(term.trim());
    if (!match) {
      problems.push(
        `plan "${name}": "${term.trim()}" is not a limit such as 1000, 1000/month or 60/minute`,
      );
      continue;
    }
    const count = Number(match[1]);
    const unit = (match[2] ?? 'month') as 'month' | 'minute';
    if (count < 1 || !Number.isSafeInteger(count) || count > 2_000_000_000) {
      problems.push(`plan "${name}": the limit per ${unit} must be a positive integer`);
    } else if (limits[unit] !== undefined) {
      problems.push(`plan "${name}": more than one limit per ${unit}`);
    } else {
      limits[unit] = count;
    }
  }
  if (problems.length > before) return undefined;
  if (limits.month === undefined) {
    problems.push(`plan "${name}" needs a monthly limit (e.g. ${name}=1000/month+60/minute)`);
    return undefined;
  }
  return { monthly: limits.month, perMinute: limits.minute };
}

/** The plan's limits as written in PLAUDER_PLANS: `1000/month+60/minute`. */
export function describePlan(plan: Plan): string {
  return plan.perMinute === undefined
    ? `${plan.monthly}/month`
    : `${plan.monthly}/month+${plan.perMinute}/minute`;
}

/** The plans when `PLAUDER_PLANS` is unset. */
export const DEFAULT_PLANS = 'standard=1000,plus=5000';
