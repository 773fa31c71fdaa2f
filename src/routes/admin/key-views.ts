/**
 * @module routes/admin/key-views
 * What the admin API shows of a key: the stored record without any secret, with its
 * status and this month's usage against its plan's limit.
 */
import type { Plans } from '../../config/plans.js';
import { type KeyStatus, keyStatus } from '../../keys/key-service.js';
import type { KeyRecord } from '../../storage/repositories/keys-repository.js';

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
  usage: { month: string; used: number; limit: number | null; remaining: number | null };
}

export function keyView(record: KeyRecord, plans: Plans, month: string, used: number): KeyView {
  // A plan removed from PLAUDER_PLANS has no limit; the console shows that instead of failing.
  const limit = plans.get(record.plan) ?? null;
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
      used,
      limit,
      remaining: limit === null ? null : Math.max(0, limit - used),
    },
  };
}
