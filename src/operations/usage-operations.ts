/**
 * @module operations/usage-operations
 * Requests per key in a month and their total: `plauder usage` and `GET /admin/v1/usage`.
 */
import { existedDuring, type KeyStatus, keyStatus, keysWithUsage } from '../keys/key-service.js';
import { windowOfMonth } from '../quota/month-window.js';
import type { Services } from '../services.js';
import { usageUnderPlan } from './plan-operations.js';

export interface MonthUsageReport {
  readonly month: string;
  /** IANA time zone of the month's window. */
  readonly timeZone: string;
  readonly total: number;
  readonly keys: readonly {
    readonly id: string;
    readonly name: string;
    readonly plan: string;
    readonly status: KeyStatus;
    readonly used: number;
    readonly limit: number | null;
  }[];
}

/**
 * The report of `month` (YYYY-MM), or of the current month in the quota's time zone: the
 * keys that existed in that month (or were counted in it), never keys created later.
 */
export async function monthUsageReport(
  services: Services,
  month = services.quota.monthOf(services.clock()).month,
): Promise<MonthUsageReport> {
  const { plans, quotaTimeZone } = services.config;
  const window = windowOfMonth(services.quota.monthOf, month);
  const withUsage = await keysWithUsage(services.keys, services.usage, month);
  const existing = withUsage.filter(({ key, used }) => used > 0 || existedDuring(key, window));
  const keys = existing.map(({ key, used }) => ({
    id: key.id,
    name: key.name,
    plan: key.plan,
    status: keyStatus(key),
    used,
    limit: usageUnderPlan(plans, key.plan, used, 0).limit,
  }));
  const total = keys.reduce((sum, row) => sum + row.used, 0);
  return { month, timeZone: quotaTimeZone, total, keys };
}
