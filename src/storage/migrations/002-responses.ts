import type { Kysely } from 'kysely';

/**
 * `responses` keeps the response objects of `POST /v1/responses` (docs/contract.md,
 * "Responses API"): one row per kept response, addressed by (API key id, keyed hash of the
 * response id), so the id itself is not stored and another key's id finds nothing. The
 * response and the conversation it continues are one sealed value; `conversation_hash` is
 * the hash of that conversation's session row, so that deleting a conversation's last
 * response can find whether others remain.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('responses')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('id_hash', 'text', (c) => c.notNull())
    .addColumn('conversation_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('responses_pk', ['key_id', 'id_hash'])
    .execute();
  await db.schema
    .createIndex('responses_created_at')
    .on('responses')
    .column('created_at')
    .execute();
  await db.schema
    .createIndex('responses_conversation')
    .on('responses')
    .columns(['key_id', 'conversation_hash'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('responses').execute();
}
