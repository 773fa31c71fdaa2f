/**
 * @module plans/plans
 * Plans and their limits, from `PLAUDER_PLANS`:
 * `standard=1000/month+60/minute,plus=5000/month+300/minute+32/concurrent`. A bare number is
 * the monthly limit (`standard=1000` is 1000 a month with no per-minute limit); every plan has
 * one. `N/concurrent` is the plan's own cap on a key's turns running at once on an instance,
 * `N/queue` its own cap on a key's turns waiting for one of those places. Token budgets
 * (docs/quota-and-limits.md, "Token budgets"): `Ntokens/month`, `Ntokens/minute`, and
 * `Ntokens/answer` for the plan's default output cap.
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
  /** Token budgets and the default output cap; absent = none (docs/quota-and-limits.md). */
  readonly tokens?: TokenBudget;
}

/** A plan's token budgets, input and output counted together. */
export interface TokenBudget {
  /** Tokens per calendar month; undefined = no monthly budget. */
  readonly monthly: number | undefined;
  /** Tokens per clock minute; undefined = no per-minute budget. */
  readonly perMinute: number | undefined;
  /**
   * The output cap of a turn whose request sets none, sent upstream as `max_tokens`; a plan
   * with a budget and no `Ntokens/answer` has DEFAULT_ANSWER_TOKENS.
   */
  readonly answer: number;
}

/** The output cap of a plan with a token budget that names none. */
const DEFAULT_ANSWER_TOKENS = 4096;

/** Plan name → limits. Insertion order is the documented order. */
export type Plans = ReadonlyMap<string, Plan>;

export type ParsePlansResult =
  | { readonly ok: true; readonly plans: Plans }
  | { readonly ok: false; readonly problems: readonly string[]; readonly plans?: undefined };

const PLAN_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const TERM = /^(\d+)(tokens)?(?:\/(month|minute|concurrent|queue|answer))?$/;

type Unit = 'month' | 'minute' | 'concurrent' | 'queue' | 'tokensMonth' | 'tokensMinute' | 'answer';

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

/** `1000`, `1000/month`, `1000/month+60/minute+2000000tokens/month` (any order); undefined when wrong. */
function parseLimits(name: string, value: string, problems: string[]): Plan | undefined {
  const limits: Partial<Record<Unit, number>> = {};
  const before = problems.length;
  for (const term of value.split('+')) {
    const unit = unitOf(TERM.exec(term.trim()));
    if (unit === undefined) {
      problems.push(
        `plan "${name}": "${term.trim()}" is not a limit such as 1000, 1000/month, 60/minute, 16/concurrent, 256/queue, 2000000tokens/month, 40000tokens/minute or 1024tokens/answer`,
      );
      continue;
    }
    const count = Number(/^\d+/.exec(term.trim())?.[0]);
    const what = WHAT[unit];
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
  const { month, minute, concurrent, queue, tokensMonth, tokensMinute, answer } = limits;
  const budgeted = tokensMonth !== undefined || tokensMinute !== undefined || answer !== undefined;
  return {
    monthly: month,
    perMinute: minute,
    ...(concurrent === undefined ? {} : { concurrent }),
    ...(queue === undefined ? {} : { queue }),
    ...(budgeted
      ? {
          tokens: {
            monthly: tokensMonth,
            perMinute: tokensMinute,
            answer: answer ?? DEFAULT_ANSWER_TOKENS,
          },
        }
      : {}),
  };
}

const WHAT: Readonly<Record<Unit, string>> = {
  month: 'per month',
  minute: 'per minute',
  concurrent: 'of concurrent turns',
  queue: 'of waiting turns',
  tokensMonth: 'of tokens per month',
  tokensMinute: 'of tokens per minute',
  answer: 'of tokens per answer',
};

/** The unit of a matched term: a bare number is a monthly limit; tokens need their window. */
function unitOf(match: RegExpExecArray | null): Unit | undefined {
  if (match === null) return undefined;
  const tokens = match[2] !== undefined;
  const unit = match[3];
  if (!tokens) return unit === 'answer' ? undefined : ((unit ?? 'month') as Unit);
  if (unit === 'month') return 'tokensMonth';
  if (unit === 'minute') return 'tokensMinute';
  if (unit === 'answer') return 'answer';
  return undefined;
}

/** The plan's limits as written in PLAUDER_PLANS: `1000/month+60/minute`. */
export function describePlan(plan: Plan): string {
  const minute = plan.perMinute === undefined ? '' : `+${plan.perMinute}/minute`;
  const concurrent = plan.concurrent === undefined ? '' : `+${plan.concurrent}/concurrent`;
  const queue = plan.queue === undefined ? '' : `+${plan.queue}/queue`;
  return `${plan.monthly}/month${minute}${concurrent}${queue}${describeTokens(plan.tokens)}`;
}

function describeTokens(tokens: TokenBudget | undefined): string {
  if (tokens === undefined) return '';
  const month = tokens.monthly === undefined ? '' : `+${tokens.monthly}tokens/month`;
  const minute = tokens.perMinute === undefined ? '' : `+${tokens.perMinute}tokens/minute`;
  return `${month}${minute}+${tokens.answer}tokens/answer`;
}

/** The plans when `PLAUDER_PLANS` is unset. */
export const DEFAULT_PLANS = 'standard=1000,plus=5000';
