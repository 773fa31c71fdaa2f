/**
 * @module operations/key-operations
 * Listing, reading, creating, changing, rotating and revoking keys, for `plauder keys …`
 * and `/admin/v1/keys` alike. Each returns a result: the front door renders it.
 */

import { parseGrace } from '../keys/grace.js';
import type { IssuedKey, KeyPatch, KeyResult, RotatedKey } from '../keys/key-service.js';
import { keysWithUsage } from '../keys/key-service.js';
import { minuteOf } from '../quota/quota-service.js';
import type { Services } from '../services.js';
import { type KeyView, keyView } from './key-view.js';

export type KeyProblem =
  | 'not_found'
  | 'revoked'
  | 'unknown_plan'
  | 'invalid_name'
  | 'invalid_grace';

export type KeyOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly problem: KeyProblem };

/** Every key with this month's (and this minute's) usage against its plan. */
export async function listKeys(services: Services): Promise<{ month: string; keys: KeyView[] }> {
  const now = services.clock();
  const month = services.quota.monthOf(now).month;
  const [rows, tokens] = await Promise.all([
    keysWithUsage(services.keys, services.usage, month, minuteOf(now)),
    services.tokens.forMonth(month),
  ]);
  const { plans } = services.config;
  return {
    month,
    keys: rows.map(({ key, used, minuteUsed }) =>
      keyView(key, plans, month, used, minuteUsed, tokens.get(key.id)),
    ),
  };
}

export async function viewKey(services: Services, id: string): Promise<KeyOutcome<KeyView>> {
  const record = await services.keys.get(id);
  if (!record) return { ok: false, problem: 'not_found' };
  const now = services.clock();
  const month = services.quota.monthOf(now).month;
  const [row, tokens] = await Promise.all([
    services.usage.row(id, month),
    services.tokens.forKey(id),
  ]);
  const minuteUsed = row.minute === minuteOf(now) ? row.minuteUsed : 0;
  const tokensUsed = tokens.find((entry) => entry.month === month)?.used;
  const { plans } = services.config;
  return { ok: true, value: keyView(record, plans, month, row.used, minuteUsed, tokensUsed) };
}

export async function createKey(
  services: Services,
  input: { name: string; plan: string; active?: boolean },
): Promise<KeyOutcome<IssuedKey>> {
  return settle(services, await services.keys.create(input));
}

export async function updateKey(
  services: Services,
  id: string,
  patch: KeyPatch,
): Promise<KeyOutcome<unknown>> {
  return settle(services, await services.keys.update(id, patch), id);
}

/** `grace`: how long the old secret keeps working, as a duration from 0 to 365d. */
export async function rotateKey(
  services: Services,
  id: string,
  grace = '0',
): Promise<KeyOutcome<RotatedKey>> {
  const graceMs = parseGrace(grace);
  if (graceMs === undefined) return { ok: false, problem: 'invalid_grace' };
  return settle(services, await services.keys.rotate(id, graceMs), id);
}

export async function revokeKey(services: Services, id: string): Promise<KeyOutcome<unknown>> {
  return settle(services, await services.keys.revoke(id), id);
}

/**
 * The key service refuses changes to revoked keys as "not found"; the operator should
 * learn that the key exists but is revoked.
 */
async function settle<T>(
  services: Services,
  result: KeyResult<T>,
  id?: string,
): Promise<KeyOutcome<T>> {
  if (result.ok) return result;
  if (result.problem !== 'not_found') return { ok: false, problem: result.problem };
  const record = id === undefined ? undefined : await services.keys.get(id);
  const revoked = record !== undefined && record.revokedAt !== null;
  return { ok: false, problem: revoked ? 'revoked' : 'not_found' };
}
