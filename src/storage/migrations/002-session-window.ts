import type { Kysely } from 'kysely';

/**
 * A session's memory window as one sealed value on its row: reading the memory is one
 * row and one decryption, writing a turn one statement. Sessions written before keep
 * their rows in `turns` and are converted on their next turn (see session-service).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').addColumn('sealed_window', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('sessions').dropColumn('sealed_window').execute();
}
