import type { Kysely } from 'kysely';

/**
 * The quota unit a running idempotent request holds (docs/contract.md, "Idempotent retries").
 *
 * - `unit_month`, `unit_minute` and `unit_day` name the month, clock minute and day whose
 *   counters the claim's reservation counted, written in the reservation's transaction;
 *   all null while the claim has reserved nothing.
 * - A retry that takes over the claim of a dead process inherits the unit instead of
 *   reserving another; a claim given up refunds it in the transaction that deletes the row;
 *   the sweep refunds the units of claims whose lease ran out with nobody taking them over.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').addColumn('unit_month', 'text').execute();
  await db.schema.alterTable('idempotency_keys').addColumn('unit_minute', 'integer').execute();
  await db.schema.alterTable('idempotency_keys').addColumn('unit_day', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('unit_day').execute();
  await db.schema.alterTable('idempotency_keys').dropColumn('unit_minute').execute();
  await db.schema.alterTable('idempotency_keys').dropColumn('unit_month').execute();
}
