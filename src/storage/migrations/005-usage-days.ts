import type { Kysely } from 'kysely';

/**
 * Requests per key and day (the console's days of the current month).
 *
 * - `usage_days` counts a key's answered requests per calendar day in the quota time zone
 *   (`YYYY-MM-DD`), written in the same transaction (on PostgreSQL: the same statement) as
 *   the month's reservation and refund, so the days of a month add up to its count.
 * - The primary key (key_id, day) is the only index: the hot path's upsert finds its row
 *   by it however many days a key has. Old days are kept, like old months (a row per key
 *   and day of use: a few hundred a year).
 * - Months counted before this migration have no days: their requests are in `usage` only.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('usage_days')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_days_pk', ['key_id', 'day'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_days').execute();
}
