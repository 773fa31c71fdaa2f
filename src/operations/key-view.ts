/**
 * @module operations/key-view
 * What operators see of a key: the stored record without any secret, with its status
 * and this month's usage against its plan's limits.
 */
import type { KeyRecord, KeyStatus } from '../keys/key-service.js';
import { keyStatus } from '../keys/key-service.js';
import type { Plans } from '../plans/plans.js';
import { tokensUnderPlan, usageUnderPlan } from './plan-operations.js';

export interface KeyView {
  id: string;
  name: string;
  plan: string;
  active: boolean;
  status: KeyStatus;
  displayPrefix: string;
  createdAt: string;
  updatedAt: string;
  revokedAt: string | null;
  usage: {
    month: string;
    used: number;
    limit: number | null;
    remaining: number | null;
    /** The current clock minute; null when the plan has no per-minute limit. */
    perMinute: { limit: number; used: number; remaining: number } | null;
    /** The month's tokens against the plan's token budget; null when it has none and used none. */
    tokens: ReturnType<typeof tokensUnderPlan>;
  };
}

export function keyView(
  record: KeyRecord,
  plans: Plans,
  month: string,
  used: number,
  minuteUsed: number,
  tokensUsed = 0,
): KeyView {
  return {
    id: record.id,
    name: record.name,
    plan: record.plan,
    active: record.active,
    status: keyStatus(record),
    displayPrefix: record.displayPrefix,
    createdAt: new Date(record.createdAt).toISOString(),
    updatedAt: new Date(record.updatedAt).toISOString(),
    revokedAt: record.revokedAt === null ? null : new Date(record.revokedAt).toISOString(),
    usage: {
      month,
      ...usageUnderPlan(plans, record.plan, used, minuteUsed),
      tokens: tokensUnderPlan(plans, record.plan, tokensUsed),
    },
  };
}
