import type { Kysely } from 'kysely';

/**
 * Per-minute limits and the events outbox (docs/contract.md, "Burst limits" and "Events").
 *
 * - `usage` gains the current clock minute of the key's month counter and the requests
 *   counted in it, so one conditional upsert of one row checks and counts both limits.
 *   A minute never spans two months (months start at whole minutes), and the row needs
 *   no clean-up: the next minute overwrites the last.
 * - `webhook_events` is the outbox: an event is inserted in the transaction of the change
 *   that causes it and delivered later by whichever instance claims it. `dedupe_key`
 *   (unique; null for key events) makes a quota event once per key and month.
 * - `webhook_receivers` remembers a receiver that answered 410 Gone (disabled, shared by
 *   every instance).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('usage')
    .addColumn('minute', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('usage')
    .addColumn('minute_used', 'integer', (c) => c.notNull().defaultTo(0))
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
  await db.schema.dropTable('webhook_receivers').execute();
  await db.schema.dropTable('webhook_events').execute();
  await db.schema.alterTable('usage').dropColumn('minute_used').execute();
  await db.schema.alterTable('usage').dropColumn('minute').execute();
}
