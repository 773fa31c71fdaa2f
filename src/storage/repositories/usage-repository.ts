/**
 * @module storage/repositories/usage-repository
 * Monthly counters keyed by (key id, month). `reserve` is one atomic conditional
 * upsert, so the limit holds under any concurrency, in one process or many.
 */
import type { Kysely } from 'kysely';
import { prepareQuery } from '../prepared-query.js';
import type { Database } from '../schema.js';

export interface UsageRow {
  readonly keyId: string;
  readonly month: string;
  readonly used: number;
}

export interface UsageRepository {
  /** Counts one request if `used < limit`; returns the new count, or undefined at the limit. */
  reserve(keyId: string, month: string, limit: number): Promise<number | undefined>;
  /** Gives back one reserved request (the core failed). */
  refund(keyId: string, month: string): Promise<void>;
  used(keyId: string, month: string): Promise<number>;
  forMonth(month: string): Promise<UsageRow[]>;
  forKey(keyId: string): Promise<UsageRow[]>;
}

type KeyMonth = { keyId: string; month: string };

export function createUsageRepository(db: Kysely<Database>): UsageRepository {
  const reserveQuery = prepareQuery<KeyMonth & { limit: number }, { used: number }>((p) =>
    db
      .insertInto('usage')
      .values({ key_id: p<string>('keyId'), month: p<string>('month'), used: 1 })
      .onConflict((oc) =>
        oc
          .columns(['key_id', 'month'])
          .doUpdateSet((eb) => ({ used: eb('usage.used', '+', 1) }))
          .where('usage.used', '<', p<number>('limit')),
      )
      .returning('used'),
  );
  const refundQuery = prepareQuery<KeyMonth, unknown>((p) =>
    db
      .updateTable('usage')
      .set((eb) => ({ used: eb('used', '-', 1) }))
      .where('key_id', '=', p<string>('keyId'))
      .where('month', '=', p<string>('month'))
      .where('used', '>', 0),
  );
  const usedQuery = prepareQuery<KeyMonth, { used: number }>((p) =>
    db
      .selectFrom('usage')
      .select('used')
      .where('key_id', '=', p<string>('keyId'))
      .where('month', '=', p<string>('month')),
  );

  return {
    async reserve(keyId, month, limit) {
      if (limit < 1) return undefined;
      const { rows } = await reserveQuery(db, { keyId, month, limit });
      return rows[0] === undefined ? undefined : Number(rows[0].used);
    },

    async refund(keyId, month) {
      await refundQuery(db, { keyId, month });
    },

    async used(keyId, month) {
      const { rows } = await usedQuery(db, { keyId, month });
      return rows[0] === undefined ? 0 : Number(rows[0].used);
    },

    async forMonth(month) {
      const rows = await db
        .selectFrom('usage')
        .select(['key_id', 'month', 'used'])
        .where('month', '=', month)
        .execute();
      return rows.map((r) => ({ keyId: r.key_id, month: r.month, used: Number(r.used) }));
    },

    async forKey(keyId) {
      const rows = await db
        .selectFrom('usage')
        .select(['key_id', 'month', 'used'])
        .where('key_id', '=', keyId)
        .orderBy('month')
        .execute();
      return rows.map((r) => ({ keyId: r.key_id, month: r.month, used: Number(r.used) }));
    },
  };
}
