import type { Kysely } from 'kysely';

/**
 * Indexes for the admin lists (docs/admin.md, "Lists: paging, search, filters"): each sort
 * order is an index ending in the id, so that a page is a range read after its cursor, and
 * each filter (plan, active) leads an index in the default order. `usage_month` serves the
 * usage report of a month, whose rows are otherwise found by (key, month).
 */
const INDEXES: ReadonlyArray<{ name: string; table: string; columns: string[] }> = [
  { name: 'api_keys_created', table: 'api_keys', columns: ['created_at', 'id'] },
  { name: 'api_keys_name', table: 'api_keys', columns: ['name', 'id'] },
  { name: 'api_keys_plan', table: 'api_keys', columns: ['plan', 'created_at', 'id'] },
  { name: 'api_keys_active', table: 'api_keys', columns: ['active', 'created_at', 'id'] },
  { name: 'usage_month', table: 'usage', columns: ['month', 'key_id', 'used'] },
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const { name, table, columns } of INDEXES) {
    await db.schema.createIndex(name).on(table).columns(columns).execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const { name } of INDEXES) await db.schema.dropIndex(name).execute();
}
