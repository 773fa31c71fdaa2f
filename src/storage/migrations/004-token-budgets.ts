import type { Kysely } from 'kysely';

/**
 * Token budgets (docs/quota-and-limits.md, "Token budgets"):
 * - `token_usage` counts a key's tokens per month, settled and still reserved together, and
 *   those of the row's current clock minute, so one conditional upsert admits a turn's worst
 *   case against both budgets;
 * - `token_reservations` holds each turn's open reservation until it is settled, with an
 *   expiry after which any instance's sweep releases it (an instance that died mid-turn).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('token_usage')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('used', 'bigint', (c) => c.notNull())
    .addColumn('minute', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('minute_used', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('token_usage_pk', ['key_id', 'month'])
    .execute();
  await db.schema
    .createTable('token_reservations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('minute', 'integer', (c) => c.notNull())
    .addColumn('tokens', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('token_reservations_expires_at')
    .on('token_reservations')
    .column('expires_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('token_reservations').execute();
  await db.schema.dropTable('token_usage').execute();
}
