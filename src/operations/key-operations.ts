/**
 * @module operations/key-operations
 * Listing, reading, creating, changing, rotating and revoking keys, for `plauder keys …`
 * and `/admin/v1/keys` alike. Each returns a result: the front door renders it.
 */

import { parseGrace } from '../keys/grace.js';
import type { IssuedKey, KeyPatch, KeyResult, RotatedKey } from '../keys/key-service.js';
import { minuteOf } from '../quota/quota-service.js';
import type { Services } from '../services.js';
import { type KeyView, keyView } from './key-view.js';
import {
  cutPage,
  keySearch,
  type ListOutcome,
  type ListPage,
  type ListQuery,
} from './list-query.js';

export type KeyProblem =
  | 'not_found'
  | 'revoked'
  | 'unknown_plan'
  | 'invalid_name'
  | 'invalid_grace';

export type KeyOutcome<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly problem: KeyProblem };

/**
 * One page of the keys of `query` with this month's (and this minute's) usage against
 * their plans, how many keys match, and the cursor of the next page.
 */
export async function listKeys(
  services: Services,
  query: ListQuery = {},
): Promise<ListOutcome<{ month: string; keys: KeyView[]; page: ListPage }>> {
  const asked = keySearch(query);
  if (!asked) return { ok: false, problem: 'invalid_cursor' };
  const now = services.clock();
  const month = services.quota.monthOf(now).month;
  const found = await services.keys.search(asked.search);
  const { records, page } = cutPage(found.records, asked.limit, found.total, asked.search.sort);
  const [rows, tokens] = await Promise.all([
    services.usage.forKeys(
      month,
      records.map((key) => key.id),
    ),
    services.tokens.forMonth(month),
  ]);
  const counts = new Map(rows.map((row) => [row.keyId, row]));
  const minute = minuteOf(now);
  const keys = records.map((key) => {
    const row = counts.get(key.id);
    const minuteUsed = row !== undefined && row.minute === minute ? row.minuteUsed : 0;
    return keyView(
      key,
      services.config.plans,
      month,
      row?.used ?? 0,
      minuteUsed,
      tokens.get(key.id),
    );
  });
  return { ok: true, value: { month, keys, page } };
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
