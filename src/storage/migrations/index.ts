/**
 * @module storage/migrations
 * Migrations are listed in code (not discovered on disk) so they work from `src/` and `dist/`.
 */
import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './001-initial.js';
import * as sessionWindow from './002-session-window.js';
import * as idempotency from './003-idempotency.js';
import * as limitsAndEvents from './004-limits-and-events.js';
import * as usageDays from './005-usage-days.js';
import * as idempotencyUnits from './006-idempotency-units.js';

const MIGRATIONS: Record<string, Migration> = {
  '001-initial': initial,
  '002-session-window': sessionWindow,
  '003-idempotency': idempotency,
  '004-limits-and-events': limitsAndEvents,
  '005-usage-days': usageDays,
  '006-idempotency-units': idempotencyUnits,
};

/** The schema version this build expects: the name of its last migration. */
export const LATEST_MIGRATION = Object.keys(MIGRATIONS).at(-1) as string;

export const migrationProvider: MigrationProvider = {
  getMigrations: async () => MIGRATIONS,
};
