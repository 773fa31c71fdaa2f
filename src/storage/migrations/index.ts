/**
 * @module storage/migrations
 * Migrations are listed in code (not discovered on disk) so they work from `src/` and `dist/`.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.js';
import * as responses from './002-responses.js';
import * as hangUps from './003-hang-ups.js';
import * as tokenBudgets from './004-token-budgets.js';
import * as adminIndexes from './005-admin-indexes.js';

const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
  '002-responses': responses,
  '003-hang-ups': hangUps,
  '004-token-budgets': tokenBudgets,
  '005-admin-indexes': adminIndexes,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
