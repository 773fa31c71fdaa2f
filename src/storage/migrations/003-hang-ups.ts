import type { Kysely } from 'kysely';

/**
 * `usage.hangup_minute` / `usage.hangups`: the clock minute (Unix ms / 60 000) whose
 * hang-ups before delivery `hangups` counts, on the key's month row, so that the free ones
 * are bounded exactly across instances (docs/quota-and-limits.md, "Hang-ups").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('usage')
    .addColumn('hangup_minute', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('usage')
    .addColumn('hangups', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage').dropColumn('hangups').execute();
  await db.schema.alterTable('usage').dropColumn('hangup_minute').execute();
}
