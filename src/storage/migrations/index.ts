/**
 * @module storage/migrations
 * Migrations are listed in code (not discovered on disk) so they work from `src/` and `dist/`.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.js';
import * as hangUps from './002-hang-ups.js';

const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
  '002-hang-ups': hangUps,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
