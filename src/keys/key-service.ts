/**
 * @module keys/key-service
 * Issuing, authenticating, rotating and revoking keys. The plaintext key exists only in
 * the return value of `create` / `rotate`; everything stored is its hash.
 */
import { randomBytes } from 'node:crypto';
import type { Plans } from '../config/plans.js';
import type { Clock } from '../quota/month-window.js';
import type {
  KeyAuthRecord,
  KeyPatch,
  KeyRecord,
  KeysRepository,
} from '../storage/repositories/keys-repository.js';
import type { UsageRepository } from '../storage/repositories/usage-repository.js';
import { displayPrefix, generateKey, hashKey, isWellFormedKey } from './key-format.js';

export interface IssuedKey {
  readonly id: string;
  /** The plaintext key: show it once, never store or log it. */
  readonly key: string;
  readonly name: string;
  readonly plan: string;
  readonly active: boolean;
}

export type KeyResult<T> =
  | { ok: true; value: T }
  | { ok: false; problem: 'not_found' | 'unknown_plan' | 'invalid_name' };

export interface KeyService {
  create(input: { name: string; plan: string; active?: boolean }): Promise<KeyResult<IssuedKey>>;
  /** Parses an Authorization header value; undefined for every kind of invalid key. */
  authenticate(authorization: string | undefined): Promise<KeyAuthRecord | undefined>;
  get(id: string): Promise<KeyRecord | undefined>;
  list(): Promise<KeyRecord[]>;
  update(id: string, patch: KeyPatch): Promise<KeyResult<KeyRecord>>;
  rotate(id: string, graceMs?: number): Promise<KeyResult<IssuedKey>>;
  revoke(id: string): Promise<KeyResult<KeyRecord>>;
}

const BEARER = /^Bearer +([^\s]+) *$/i;
const KEY_ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
export const KEY_NAME_MAX = 100;

export type KeyStatus = 'active' | 'inactive' | 'revoked';

export function keyStatus(key: Pick<KeyRecord, 'revokedAt' | 'active'>): KeyStatus {
  if (key.revokedAt !== null) return 'revoked';
  return key.active ? 'active' : 'inactive';
}

/** Every key with its requests in `month` (0 for keys without a counter row). */
export async function keysWithUsage(
  keys: Pick<KeyService, 'list'>,
  usage: Pick<UsageRepository, 'forMonth'>,
  month: string,
): Promise<{ key: KeyRecord; used: number }[]> {
  const [records, rows] = await Promise.all([keys.list(), usage.forMonth(month)]);
  const used = new Map(rows.map((row) => [row.keyId, row.used]));
  return records.map((key) => ({ key, used: used.get(key.id) ?? 0 }));
}

export function createKeyService(keys: KeysRepository, plans: Plans, clock: Clock): KeyService {
  async function found(id: string): Promise<KeyResult<KeyRecord>> {
    const record = await keys.get(id);
    return record ? { ok: true, value: record } : { ok: false, problem: 'not_found' };
  }

  return {
    async create({ name, plan, active = true }) {
      if (!plans.has(plan)) return { ok: false, problem: 'unknown_plan' };
      if (!isValidName(name)) return { ok: false, problem: 'invalid_name' };
      const key = generateKey();
      const id = newKeyId();
      await keys.create(
        { id, name, plan, active, hash: hashKey(key), displayPrefix: displayPrefix(key) },
        clock(),
      );
      return { ok: true, value: { id, key, name, plan, active } };
    },

    async authenticate(authorization) {
      const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
      // The checksum refuses typos and garbage before any database work.
      if (token === undefined || !isWellFormedKey(token)) return undefined;
      return keys.findByHash(hashKey(token), clock());
    },

    get: (id) => keys.get(id),
    list: () => keys.list(),

    async update(id, patch) {
      if (patch.plan !== undefined && !plans.has(patch.plan))
        return { ok: false, problem: 'unknown_plan' };
      if (patch.name !== undefined && !isValidName(patch.name))
        return { ok: false, problem: 'invalid_name' };
      if (!(await keys.update(id, patch, clock()))) return { ok: false, problem: 'not_found' };
      return found(id);
    },

    async rotate(id, graceMs = 0) {
      const record = await keys.get(id);
      if (!record || record.revokedAt !== null) return { ok: false, problem: 'not_found' };
      const key = generateKey();
      const rotated = await keys.rotate(
        id,
        { hash: hashKey(key), displayPrefix: displayPrefix(key) },
        graceMs,
        clock(),
      );
      if (!rotated) return { ok: false, problem: 'not_found' };
      return {
        ok: true,
        value: { id, key, name: record.name, plan: record.plan, active: record.active },
      };
    },

    async revoke(id) {
      if (!(await keys.revoke(id, clock()))) return { ok: false, problem: 'not_found' };
      return found(id);
    },
  };
}

function isValidName(name: string): boolean {
  const trimmed = name.trim();
  return trimmed.length > 0 && trimmed.length <= KEY_NAME_MAX && !/\p{Cc}/u.test(name);
}

/** Public, not secret: `key_` + 16 base36 characters. */
function newKeyId(): string {
  let id = 'key_';
  for (const byte of randomBytes(16)) id += KEY_ID_ALPHABET[byte % 36];
  return id;
}
