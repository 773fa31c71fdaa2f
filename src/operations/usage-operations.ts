/**
 * @module operations/usage-operations
 * Requests per key in a month and their total (`plauder usage`, `GET /admin/v1/usage`), and
 * one key's last months and the days of the current one (`GET /admin/v1/keys/{id}/usage`).
 */
import { type KeyStatus, keyStatus } from '../keys/key-service.js';
import { daysInMonth, windowOfMonth } from '../quota/month-window.js';
import type { DayUsage, MonthUsage } from '../quota/quota-service.js';
import type { Services } from '../services.js';
import type { KeyOutcome } from './key-operations.js';
import {
  cutPage,
  keySearch,
  type ListOutcome,
  type ListPage,
  type ListQuery,
} from './list-query.js';
import { tokensUnderPlan, usageUnderPlan } from './plan-operations.js';

export interface MonthUsageReport {
  readonly month: string;
  /** IANA time zone of the month's window. */
  readonly timeZone: string;
  readonly total: number;
  /** Tokens of all keys in the month (settled and still reserved). */
  readonly totalTokens: number;
  readonly keys: readonly {
    readonly id: string;
    readonly name: string;
    readonly plan: string;
    readonly status: KeyStatus;
    readonly used: number;
    readonly limit: number | null;
    /** Tokens against the plan's monthly token budget; null when it has none and used none. */
    readonly tokens: ReturnType<typeof tokensUnderPlan>;
  }[];
  readonly page: ListPage;
}

/**
 * The report of `month` (YYYY-MM), or of the current month in the quota's time zone: one
 * page of the keys of `query` that existed in that month (or were counted in it), never
 * keys created later; `total` is the requests of all of them, not only the page's.
 */
export async function monthUsageReport(
  services: Services,
  month = services.quota.monthOf(services.clock()).month,
  query: ListQuery = {},
): Promise<ListOutcome<MonthUsageReport>> {
  const { plans, quotaTimeZone } = services.config;
  const window = windowOfMonth(services.quota.monthOf, month);
  const asked = keySearch(query, { month, startMs: window.startMs, endMs: window.endMs });
  if (!asked) return { ok: false, problem: 'invalid_cursor' };
  const found = await services.keys.search(asked.search);
  const { records, page } = cutPage(found.records, asked.limit, found.total, asked.search.sort);
  const [rows, tokens] = await Promise.all([
    services.usage.forKeys(
      month,
      records.map((key) => key.id),
    ),
    services.tokens.forMonth(month),
  ]);
  const counts = new Map(rows.map((row) => [row.keyId, row.used]));
  const keys = records.map((key) => {
    const used = counts.get(key.id) ?? 0;
    return {
      id: key.id,
      name: key.name,
      plan: key.plan,
      status: keyStatus(key),
      used,
      limit: usageUnderPlan(plans, key.plan, used, 0).limit,
      tokens: tokensUnderPlan(plans, key.plan, tokens.get(key.id) ?? 0),
    };
  });
  // Tokens of all keys in the month, as the report gave them before it was paged.
  const totalTokens = [...tokens.values()].reduce((sum, used) => sum + used, 0);
  return {
    ok: true,
    value: { month, timeZone: quotaTimeZone, total: found.requests, totalTokens, keys, page },
  };
}

/** How many months a key's usage history shows, the current one last. */
const HISTORY_MONTHS = 12;

export interface KeyUsageHistory {
  readonly id: string;
  /** The current plan's monthly limit; null when the plan is not configured. */
  readonly limit: number | null;
  /** The last `HISTORY_MONTHS` months, oldest first, the current one last. */
  readonly months: readonly (MonthUsage & { readonly tokens: number })[];
  /** The current plan's monthly token budget; null when it has none. */
  readonly tokenLimit: number | null;
  /** Today is day `day` of the `days` days of the current month (quota time zone). */
  readonly currentMonth: { readonly day: number; readonly days: number };
  /** Each day of the current month from the 1st up to today (zero for days without requests). */
  readonly days: readonly DayUsage[];
}

/** One key's requests per month over the last year, and per day in the current month. */
export async function keyUsageHistory(
  services: Services,
  id: string,
): Promise<KeyOutcome<KeyUsageHistory>> {
  const key = await services.keys.get(id);
  if (!key) return { ok: false, problem: 'not_found' };
  const now = services.clock();
  const [months, days, tokens] = await Promise.all([
    services.quota.history(key.id, now, HISTORY_MONTHS),
    services.quota.daysOfMonth(key.id, now),
    services.tokens.forKey(key.id),
  ]);
  const tokensOf = new Map(tokens.map((row) => [row.month, row.used]));
  const month = services.quota.monthOf(now).month;
  return {
    ok: true,
    value: {
      id: key.id,
      limit: usageUnderPlan(services.config.plans, key.plan, 0, 0).limit,
      months: months.map((row) => ({ ...row, tokens: tokensOf.get(row.month) ?? 0 })),
      tokenLimit: services.config.plans.get(key.plan)?.tokens?.monthly ?? null,
      currentMonth: { day: days.length, days: daysInMonth(month) },
      days,
    },
  };
}
