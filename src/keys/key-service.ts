/**
 * @module keys/key-service
 * Issuing, authenticating, rotating and revoking keys. The plaintext key exists only in
 * the return value of `create` / `rotate`; everything stored is its hash.
 */
import { randomBytes } from 'node:crypto';
import type { EventOutbox } from '../events/event-outbox.js';
import type { KeyRef } from '../events/events.js';
import type { Plans } from '../plans/plans.js';
import type {
  KeyAuthRecord,
  KeyPage,
  KeyPatch,
  KeyRecord,
  KeySearch,
  KeysRepository,
} from '../storage/repositories/keys-repository.js';
import type { Clock } from '../util/clock.js';
import { createKeyCache, type KeyCache } from './key-cache.js';
import { displayPrefix, generateKey, hashKey, isWellFormedKey } from './key-format.js';

/** A stored key as the rest of the service sees it (its table row stays inside storage). */
export type { KeyAuthRecord, KeyPatch, KeyRecord };

export interface IssuedKey {
  readonly id: string;
  /** The plaintext key: show it once, never store or log it. */
  readonly key: string;
  readonly name: string;
  readonly plan: string;
  readonly active: boolean;
}

export interface RotatedKey extends IssuedKey {
  /** When the secrets before this rotation stop working (ISO 8601). */
  readonly previousKeyExpiresAt: string;
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
  /** One page of the admin lists (docs/admin.md, "Lists: paging, search, filters"). */
  search(search: KeySearch): Promise<KeyPage>;
  update(id: string, patch: KeyPatch): Promise<KeyResult<KeyRecord>>;
  rotate(id: string, graceMs?: number): Promise<KeyResult<RotatedKey>>;
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

/**
 * Every change records its event (key.created, key.rotated, key.revoked, key.updated) in
 * the change's own transaction, through the outbox.
 */
export function createKeyService(
  keys: KeysRepository,
  plans: Plans,
  clock: Clock,
  outbox: EventOutbox,
  cache: KeyCache = createKeyCache({ ttlMs: 0, maxEntries: 0 }),
): KeyService {
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
      const now = clock();
      await keys.create(
        { id, name, plan, active, hash: hashKey(key), displayPrefix: displayPrefix(key) },
        now,
        outbox.record({ type: 'key.created', data: { keyId: id, name, plan, active } }, now),
      );
      outbox.committed();
      return { ok: true, value: { id, key, name, plan, active } };
    },

    async authenticate(authorization) {
      const token = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
      // The checksum refuses typos and garbage before any database work.
      if (token === undefined || !isWellFormedKey(token)) return undefined;
      const hash = hashKey(token);
      const now = clock();
      return cache.lookup(hash, now, () => keys.findByHash(hash, now));
    },

    get: (id) => keys.get(id),
    list: () => keys.list(),
    search: (search) => keys.search(search),

    async update(id, patch) {
      if (patch.plan !== undefined && !plans.has(patch.plan))
        return { ok: false, problem: 'unknown_plan' };
      if (patch.name !== undefined && !isValidName(patch.name))
        return { ok: false, problem: 'invalid_name' };
      const before = await keys.get(id);
      if (!before) return { ok: false, problem: 'not_found' };
      const now = clock();
      const event = updatedEvent(before, patch);
      const updated = await keys.update(id, patch, now, event && outbox.record(event, now));
      cache.clear();
      if (!updated) return { ok: false, problem: 'not_found' };
      if (event) outbox.committed();
      return found(id);
    },

    async rotate(id, graceMs = 0) {
      const record = await keys.get(id);
      if (!record || record.revokedAt !== null) return { ok: false, problem: 'not_found' };
      const key = generateKey();
      const now = clock();
      const previousKeyExpiresAt = new Date(now + graceMs).toISOString();
      const rotated = await keys.rotate(
        id,
        { hash: hashKey(key), displayPrefix: displayPrefix(key) },
        graceMs,
        now,
        outbox.record(
          { type: 'key.rotated', data: { ...keyRef(record), previousKeyExpiresAt } },
          now,
        ),
      );
      cache.clear();
      if (!rotated) return { ok: false, problem: 'not_found' };
      outbox.committed();
      return {
        ok: true,
        value: {
          id,
          key,
          name: record.name,
          plan: record.plan,
          active: record.active,
          previousKeyExpiresAt,
        },
      };
    },

    async revoke(id) {
      const record = await keys.get(id);
      if (!record) return { ok: false, problem: 'not_found' };
      const now = clock();
      const event = outbox.record({ type: 'key.revoked', data: keyRef(record) }, now);
      const revoked = await keys.revoke(id, now, event);
      cache.clear();
      if (!revoked) return { ok: false, problem: 'not_found' };
      outbox.committed();
      return found(id);
    },
  };
}

function keyRef(record: Pick<KeyRecord, 'id' | 'name' | 'plan'>): KeyRef {
  return { keyId: record.id, name: record.name, plan: record.plan };
}

/** key.updated with the fields that change and their values before; none if nothing does. */
function updatedEvent(before: KeyRecord, patch: KeyPatch) {
  const previous: { name?: string; plan?: string; active?: boolean } = {};
  if (patch.name !== undefined && patch.name !== before.name) previous.name = before.name;
  if (patch.plan !== undefined && patch.plan !== before.plan) previous.plan = before.plan;
  if (patch.active !== undefined && patch.active !== before.active) previous.active = before.active;
  if (Object.keys(previous).length === 0) return undefined;
  const after = {
    id: before.id,
    name: patch.name ?? before.name,
    plan: patch.plan ?? before.plan,
    active: patch.active ?? before.active,
  };
  return {
    type: 'key.updated' as const,
    data: { ...keyRef(after), active: after.active, previous },
  };
}

function isValidName(name: string): boolean {
  const trimmed = name.trim();
  return trimmed.length > 0 && trimmed.length <= KEY_NAME_MAX && !/\p{Cc}/u.test(name);
}

const KEY_ID_LENGTH = 16;
/** The largest multiple of 36 within a byte: bytes from it up would favour the first letters. */
const KEY_ID_BYTE_LIMIT = 252;

/**
 * Public, not secret: `key_` + 16 base36 characters, each equally likely (rejection
 * sampling: `byte % 36` over all 256 byte values would pick 0-3 more often than the rest).
 */
export function newKeyId(random: (size: number) => Buffer = randomBytes): string {
  let id = 'key_';
  while (id.length < 4 + KEY_ID_LENGTH) {
    for (const byte of random(KEY_ID_LENGTH)) {
      if (byte < KEY_ID_BYTE_LIMIT && id.length < 4 + KEY_ID_LENGTH)
        id += KEY_ID_ALPHABET[byte % 36];
    }
  }
  return id;
}
