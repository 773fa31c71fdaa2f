/**
 * @module plans/plans
 * Plans and their limits, from `PLAUDER_PLANS`:
 * `standard=1000/month+60/minute,plus=5000/month+300/minute+32/concurrent`. A bare number is
 * the monthly limit (`standard=1000` is 1000 a month with no per-minute limit); every plan has
 * one. `N/concurrent` is the plan's own cap on a key's turns running at once on an instance,
 * `N/queue` its own cap on a key's turns waiting for one of those places.
 */

export interface Plan {
  /** Requests per calendar month. */
  readonly monthly: number;
  /** Requests per clock minute; undefined = no per-minute limit. */
  readonly perMinute: number | undefined;
  /** Turns of one key at once on an instance; absent = `PLAUDER_KEY_CONCURRENCY`. */
  readonly concurrent?: number;
  /** Turns of one key waiting for a place at once on an instance; absent = `PLAUDER_KEY_QUEUE`. */
  readonly queue?: number;
}

/** Plan name → limits. Insertion order is the documented order. */
export type Plans = ReadonlyMap<string, Plan>;

export type ParsePlansResult =
  | { readonly ok: true; readonly plans: Plans }
  | { readonly ok: false; readonly problems: readonly string[]; readonly plans?: undefined };

const PLAN_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const TERM = /^(\d+)(?:\/(month|minute|concurrent|queue))?$/;

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
  const limits: { month?: number; minute?: number; concurrent?: number; queue?: number } = {};
  const before = problems.length;
  for (const term of value.split('+')) {
    const match = TERM.exec(term.trim());
    if (!match) {
      problems.push(
        `plan "${name}": "${term.trim()}" is not a limit such as 1000, 1000/month, 60/minute, 16/concurrent or 256/queue`,
      );
      continue;
    }
    const count = Number(match[1]);
    const unit = (match[2] ?? 'month') as 'month' | 'minute' | 'concurrent' | 'queue';
    const what =
      unit === 'concurrent'
        ? 'of concurrent turns'
        : unit === 'queue'
          ? 'of waiting turns'
          : `per ${unit}`;
    if (count < 1 || !Number.isSafeInteger(count) || count > 2_000_000_000) {
      problems.push(`plan "${name}": the limit ${what} must be a positive integer`);
    } else if (limits[unit] !== undefined) {
      problems.push(`plan "${name}": more than one limit ${what}`);
    } else {
      limits[unit] = count;
    }
  }
  if (problems.length > before) return undefined;
  if (limits.month === undefined) {
    problems.push(`plan "${name}" needs a monthly limit (e.g. ${name}=1000/month+60/minute)`);
    return undefined;
  }
  const { month, minute, concurrent, queue } = limits;
  return {
    monthly: month,
    perMinute: minute,
    ...(concurrent === undefined ? {} : { concurrent }),
    ...(queue === undefined ? {} : { queue }),
  };
}

/** The plan's limits as written in PLAUDER_PLANS: `1000/month+60/minute`. */
export function describePlan(plan: Plan): string {
  const minute = plan.perMinute === undefined ? '' : `+${plan.perMinute}/minute`;
  const concurrent = plan.concurrent === undefined ? '' : `+${plan.concurrent}/concurrent`;
  const queue = plan.queue === undefined ? '' : `+${plan.queue}/queue`;
  return `${plan.monthly}/month${minute}${concurrent}${queue}`;
}

/** The plans when `PLAUDER_PLANS` is unset. */
export const DEFAULT_PLANS = 'standard=1000,plus=5000';
