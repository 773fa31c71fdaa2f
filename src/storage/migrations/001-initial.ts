import type { Kysely } from 'kysely';

// Portable types only (text, integer, bigint) so the same migration runs on every dialect.
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
    .addPrimaryKeyConstraint('usage_pk', ['key_id', 'month'])
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('session_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_active_at', 'bigint', (c) => c.notNull())
    .addColumn('turn_count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('sessions_pk', ['key_id', 'session_hash'])
    .execute();
  await db.schema
    .createIndex('sessions_last_active_at')
    .on('sessions')
    .column('last_active_at')
    .execute();

  await db.schema
    .createTable('turns')
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('session_hash', 'text', (c) => c.notNull())
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('sealed', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('turns_pk', ['key_id', 'session_hash', 'seq'])
    .addForeignKeyConstraint(
      'turns_session_fk',
      ['key_id', 'session_hash'],
      'sessions',
      ['key_id', 'session_hash'],
      (c) => c.onDelete('cascade'),
    )
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['turns', 'sessions', 'usage', 'key_secrets', 'api_keys']) {
    await db.schema.dropTable(table).execute();
  }
}
