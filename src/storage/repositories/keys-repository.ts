/**
 * @module storage/repositories/keys-repository
 * API keys and their secrets (hashes only). A key id is stable; rotation adds a secret
 * and lets the old ones expire, so usage and sessions stay with the id.
 */
import { type Kysely, type SelectQueryBuilder, sql, type Transaction } from 'kysely';
import type { StoreFeatures } from '../dialect.js';
import { type BoundQuery, prepareQuery, queryTarget, runSteps } from '../prepared-query.js';
import type { ApiKeysTable, Database } from '../schema.js';
import { UnitOfWork, type Writes } from '../unit-of-work.js';

export interface KeyRecord {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  readonly active: boolean;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly revokedAt: number | null;
  /** Display prefix of the newest secret, e.g. `plauder_Ab3x`. */
  readonly displayPrefix: string;
}

/** What authentication needs to know about the key behind a secret. */
export interface KeyAuthRecord {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  readonly active: boolean;
}

export interface FoundKey {
  readonly key: KeyAuthRecord;
  /** Unix ms at which the secret stops working (a rotation's grace), or null. */
  readonly secretExpiresAt: number | null;
}

interface NewKey {
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  readonly active: boolean;
  readonly hash: string;
  readonly displayPrefix: string;
}

export type KeyPatch = Partial<Pick<KeyRecord, 'name' | 'plan' | 'active'>>;

/** The orders of the admin lists; `-` is descending. Ties are broken by the id. */
export const KEY_SORTS = ['created', '-created', 'name', '-name'] as const;
export type KeySort = (typeof KEY_SORTS)[number];

/** Which keys a list shows (docs/admin.md, "Lists: paging, search, filters"). */
export interface KeyFilter {
  /** Part of the name, the id or a secret's display prefix, case-insensitive (ASCII). */
  readonly q?: string;
  readonly plan?: string;
  readonly active?: boolean;
  /**
   * Only keys that existed during [startMs, endMs) or have requests in `month` (the
   * usage report's rule, as `existedDuring` in keys/key-service.ts).
   */
  readonly existedIn?: { readonly month: string; readonly startMs: number; readonly endMs: number };
}

export interface KeyPage {
  readonly records: KeyRecord[];
  readonly total: number;
  /** The requests in `existedIn.month` of every key of the filter; 0 without `existedIn`. */
  readonly requests: number;
}

/** One page: the keys after `after` (a previous page's last key) in `sort` order. */
export interface KeySearch extends KeyFilter {
  readonly sort: KeySort;
  readonly limit: number;
  readonly after?: { readonly value: string | number; readonly id: string };
}

/**
 * The changes take `also`: further writes (the events they cause) committed in the same
 * transaction, and only when the change is made.
 */
export interface KeysRepository {
  create(key: NewKey, now: number, also?: Writes): Promise<void>;
  /** The live key behind a secret hash: not revoked, secret not expired. */
  /**
   * The live key with this secret hash at `now`, and when that secret stops working
   * (null: not before the key is rotated or revoked).
   */
  findByHash(hash: string, now: number): Promise<FoundKey | undefined>;
  get(id: string): Promise<KeyRecord | undefined>;
  list(): Promise<KeyRecord[]>;
  /**
   * Up to `limit` keys of the filter after the cursor, how many match in all, and (with
   * `existedIn`) the requests of all of them in its month.
   */
  search(search: KeySearch): Promise<KeyPage>;
  update(id: string, patch: KeyPatch, now: number, also?: Writes): Promise<boolean>;
  /** Adds a new secret; the current ones expire at `now + graceMs`. False if no live key. */
  rotate(
    id: string,
    secret: Pick<NewKey, 'hash' | 'displayPrefix'>,
    graceMs: number,
    now: number,
    also?: Writes,
  ): Promise<boolean>;
  revoke(id: string, now: number, also?: Writes): Promise<boolean>;
}

export function createKeysRepository(
  db: Kysely<Database>,
  features: Pick<StoreFeatures, 'announceKeyChange' | 'statements'> = {},
): KeysRepository {
  const on = queryTarget(db, features);
  // Commits with every change of a key, so that other processes' key caches hear of it.
  const announced = (also: Writes | undefined) => {
    const steps = UnitOfWork.gather(also);
    return features.announceKeyChange ? [...steps, features.announceKeyChange] : steps;
  };
  const selectKeys = db
    .selectFrom('api_keys as k')
    .select([
      'k.id',
      'k.name',
      'k.plan',
      'k.active',
      'k.created_at',
      'k.updated_at',
      'k.revoked_at',
    ])
    .select((eb) =>
      eb
        .selectFrom('key_secrets as s')
        .select('s.display_prefix')
        .whereRef('s.key_id', '=', 'k.id')
        // The current secret (no expiry) first: rotation may happen in the same millisecond.
        .orderBy(sql`case when s.expires_at is null then 0 else 1 end`)
        .orderBy('s.created_at', 'desc')
        .limit(1)
        .as('display_prefix'),
    );
  const findByHashQuery = prepareQuery<
    { hash: string },
    {
      id: string;
      name: string;
      plan: string;
      active: number;
      revoked_at: number | null;
      expires_at: number | null;
    }
  >((p) =>
    db
      .selectFrom('key_secrets as s')
      .innerJoin('api_keys as k', 'k.id', 's.key_id')
      .select(['k.id', 'k.name', 'k.plan', 'k.active', 'k.revoked_at', 's.expires_at'])
      .where('s.hash', '=', p<string>('hash')),
  );

  return {
    async create(key, now, also) {
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('api_keys')
          .values({
            id: key.id,
            name: key.name,
            plan: key.plan,
            active: key.active ? 1 : 0,
            created_at: now,
            updated_at: now,
            revoked_at: null,
          })
          .execute();
        await trx
          .insertInto('key_secrets')
          .values({
            hash: key.hash,
            key_id: key.id,
            display_prefix: key.displayPrefix,
            created_at: now,
            expires_at: null,
          })
          .execute();
        await runSteps(trx, UnitOfWork.gather(also));
      });
    },

    async findByHash(hash, now) {
      const row = (await findByHashQuery(on, { hash })).rows[0];
      if (!row || row.revoked_at !== null) return undefined;
      const secretExpiresAt = row.expires_at === null ? null : Number(row.expires_at);
      if (secretExpiresAt !== null && secretExpiresAt <= now) return undefined;
      const key = { id: row.id, name: row.name, plan: row.plan, active: Number(row.active) === 1 };
      return { key, secretExpiresAt };
    },

    async get(id) {
      const row = await selectKeys.where('k.id', '=', id).executeTakeFirst();
      return row && toKeyRecord(row);
    },

    async list() {
      const rows = await selectKeys.orderBy('k.created_at').orderBy('k.id').execute();
      return rows.map(toKeyRecord);
    },

    async search(search) {
      const column = search.sort.endsWith('name') ? ('k.name' as const) : ('k.created_at' as const);
      const direction = search.sort.startsWith('-') ? 'desc' : 'asc';
      let page = filtered(selectKeys, search);
      if (search.after !== undefined) {
        const { value, id } = search.after;
        page = page.where((eb) =>
          eb(eb.refTuple(column, 'k.id'), direction === 'asc' ? '>' : '<', eb.tuple(value, id)),
        );
      }
      const month = search.existedIn?.month;
      const [rows, counted, summed] = await Promise.all([
        page.orderBy(column, direction).orderBy('k.id', direction).limit(search.limit).execute(),
        filtered(db.selectFrom('api_keys as k'), search)
          .select((eb) => eb.fn.countAll<number>().as('total'))
          .executeTakeFirst(),
        // The month's requests of all the keys of the filter (the usage report's total): the
        // month's rows of those keys, found once (a sum per key took 3x as long).
        month === undefined
          ? undefined
          : db
              .selectFrom('usage as u')
              .select((eb) => eb.fn.sum<number>('u.used').as('requests'))
              .where('u.month', '=', month)
              .where(
                'u.key_id',
                'in',
                filtered(db.selectFrom('api_keys as k'), search).select('k.id'),
              )
              .executeTakeFirst(),
      ]);
      return {
        records: rows.map(toKeyRecord),
        total: Number(counted?.total ?? 0),
        requests: Number(summed?.requests ?? 0),
      };
    },

    async update(id, patch, now, also) {
      return changeThen(db, announced(also), (trx) =>
        trx
          .updateTable('api_keys')
          .set({
            ...(patch.name === undefined ? {} : { name: patch.name }),
            ...(patch.plan === undefined ? {} : { plan: patch.plan }),
            ...(patch.active === undefined ? {} : { active: patch.active ? 1 : 0 }),
            updated_at: now,
          })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .executeTakeFirst(),
      );
    },

    async rotate(id, secret, graceMs, now, also) {
      return db.transaction().execute(async (trx) => {
        const touched = await trx
          .updateTable('api_keys')
          .set({ updated_at: now })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .executeTakeFirst();
        if (touched.numUpdatedRows === 0n) return false;
        const expiresAt = now + graceMs;
        // Secrets already expiring earlier keep their earlier end.
        await trx
          .updateTable('key_secrets')
          .set({ expires_at: expiresAt })
          .where('key_id', '=', id)
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', expiresAt)]))
          .execute();
        await trx
          .insertInto('key_secrets')
          .values({
            hash: secret.hash,
            key_id: id,
            display_prefix: secret.displayPrefix,
            created_at: now,
            expires_at: null,
          })
          .execute();
        await runSteps(trx, announced(also));
        return true;
      });
    },

    async revoke(id, now, also) {
      return changeThen(db, announced(also), (trx) =>
        trx
          .updateTable('api_keys')
          .set({ revoked_at: now, updated_at: now, active: 0 })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .executeTakeFirst(),
      );
    },
  };
}

/** The tables of a query over `api_keys as k`. */
type KeysQuery = Database & { k: ApiKeysTable };

/**
 * `query` narrowed to the keys of `filter`. The search is `lower(…) like` on both dialects
 * (SQLite's LIKE ignores ASCII case, PostgreSQL's does not), with `!` escaping the pattern.
 */
function filtered<O>(
  query: SelectQueryBuilder<KeysQuery, 'k', O>,
  filter: KeyFilter,
): SelectQueryBuilder<KeysQuery, 'k', O> {
  let narrowed = query;
  if (filter.plan !== undefined) narrowed = narrowed.where('k.plan', '=', filter.plan);
  if (filter.active !== undefined)
    narrowed = narrowed.where('k.active', '=', filter.active ? 1 : 0);
  const q = filter.q?.trim().toLowerCase();
  if (q) {
    const pattern = `%${q.replace(/[!%_]/g, (c) => `!${c}`)}%`;
    const like = (ref: string) => sql<boolean>`lower(${sql.ref(ref)}) like ${pattern} escape '!'`;
    narrowed = narrowed.where((eb) =>
      eb.or([
        like('k.name'),
        // Ids are lower case already.
        sql<boolean>`${sql.ref('k.id')} like ${pattern} escape '!'`,
        // Not correlated: the matching secrets are found once, not once for each of the
        // keys, which a correlated subquery would scan again per key.
        eb(
          'k.id',
          'in',
          eb.selectFrom('key_secrets as ks').select('ks.key_id').where(like('ks.display_prefix')),
        ),
      ]),
    );
  }
  const window = filter.existedIn;
  if (window !== undefined) {
    narrowed = narrowed.where((eb) =>
      eb.or([
        eb.and([
          eb('k.created_at', '<', window.endMs),
          eb.or([eb('k.revoked_at', 'is', null), eb('k.revoked_at', '>=', window.startMs)]),
        ]),
        // Not correlated, as the search by prefix: the month's counted keys are found once.
        eb(
          'k.id',
          'in',
          eb
            .selectFrom('usage as u')
            .select('u.key_id')
            .where('u.month', '=', window.month)
            .where('u.used', '>', 0),
        ),
      ]),
    );
  }
  return narrowed;
}

/** One update of a key and, if it changed the key, `steps`, in one transaction. */
async function changeThen(
  db: Kysely<Database>,
  steps: readonly BoundQuery[],
  change: (trx: Transaction<Database>) => Promise<{ numUpdatedRows: bigint }>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const changed = (await change(trx)).numUpdatedRows > 0n;
    if (changed) await runSteps(trx, steps);
    return changed;
  });
}

type KeyRow = ApiKeysTable & { display_prefix: string | null };

function toKeyRecord(row: KeyRow): KeyRecord {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    active: Number(row.active) === 1,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    displayPrefix: row.display_prefix ?? '',
  };
}
