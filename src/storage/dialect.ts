/**
 * @module storage/dialect
 * What each database implementation (sqlite/, postgres/) hands to `createStore`.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

export interface OpenedDatabase {
  readonly db: Kysely<Database>;
  /** One cheap round trip: is the database there? */
  ping(): Promise<void>;
  /** Runs `migrate` so that only one process migrates at a time. */
  migrateExclusively(migrate: () => Promise<void>): Promise<void>;
}
