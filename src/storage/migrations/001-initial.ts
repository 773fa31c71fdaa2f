import type { Kysely } from 'kysely';

/**
 * The whole schema (src/storage/schema.ts describes each column). Portable types only
 * (text, integer, bigint) so the same migration runs on every dialect.
 *
 * - `sessions.sealed_window` is a session's memory window as one sealed value: reading the
 *   memory is one row and one decryption, writing a turn one statement.
 * - `usage` holds the key's month counter and its current clock minute, so one conditional
 *   upsert of one row checks and counts both limits (docs/contract.md, "Burst limits"); a
 *   minute never spans two months, and the next minute overwrites the last.
 * - `usage_days` counts a key's answered requests per day in the quota time zone, written
 *   with the month's reservation and refund, so the days of a month add up to its count.
 * - `idempotency_keys` keeps outcomes of requests sent with an `Idempotency-Key`, and the
 *   quota unit a running one holds (docs/contract.md, "Idempotent retries").
 * - `webhook_events` is the events outbox: an event is inserted in the transaction of the
 *   change that causes it and delivered later by whichever instance claims it
 *   (docs/contract.md, "Events"); `webhook_receivers` remembers receivers that answered 410.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('active', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();

  await db.schema
    .createTable('key_secrets')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .execute();
  await db.schema.createIndex('key_secrets_key_id').on('key_secrets').column('key_id').execute();

  await db.schema
    .createTable('usage')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('month', 'text', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull())
    .addColumn('minute', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('minute_used', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_pk', ['key_id', 'month'])
    .execute();

  // The primary key is the only index: the hot path's upsert finds its row by it.
  await db.schema
    .createTable('usage_days')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('used', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_days_pk', ['key_id', 'day'])
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('session_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_active_at', 'bigint', (c) => c.notNull())
    .addColumn('turn_count', 'integer', (c) => c.notNull())
    .addColumn('sealed_window', 'text')
    .addPrimaryKeyConstraint('sessions_pk', ['key_id', 'session_hash'])
    .execute();
  await db.schema
    .createIndex('sessions_last_active_at')
    .on('sessions')
    .column('last_active_at')
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('key_hash', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('claim', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('unit_month', 'text')
    .addColumn('unit_minute', 'integer')
    .addColumn('unit_day', 'text')
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['key_id', 'key_hash'])
    .execute();
  await db.schema
    .createIndex('idempotency_keys_expires_at')
    .on('idempotency_keys')
    .column('expires_at')
    .execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('dedupe_key', 'text', (c) => c.unique())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('claim', 'text')
    .addColumn('claimed_until', 'bigint')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('delivered_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('webhook_events_due')
    .on('webhook_events')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_events_created_at')
    .on('webhook_events')
    .column('created_at')
    .execute();

  await db.schema
    .createTable('webhook_receivers')
    .addColumn('url', 'text', (c) => c.primaryKey())
    .addColumn('disabled_at', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'webhook_receivers',
    'webhook_events',
    'idempotency_keys',
    'sessions',
    'usage_days',
    'usage',
    'key_secrets',
    'api_keys',
  ]) {
    await db.schema.dropTable(table).execute();
  }
}
