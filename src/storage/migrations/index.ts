/**
 * @module storage/migrations
 * Migrations are listed in code (not discovered on disk) so they work from `src/` and `dist/`.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.js';

const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
