/**
 * @module storage/dialect
 * What each database implementation (sqlite/, postgres/) hands to `createStore`.
 */
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/** What a repository may need to know of the database under it (nothing else may ask). */
export interface StoreFeatures {
  /** `select … for update skip locked`: workers skip rows another transaction holds. */
  readonly skipLocked: boolean;
  /**
   * Data-modifying CTEs (`with a as (insert … returning …) insert …`): several writes that
   * depend on each other in one statement, so in one round trip.
   */
  readonly writingCtes: boolean;
}

export interface OpenedDatabase {
  readonly db: Kysely<Database>;
  readonly features: StoreFeatures;
  /** One cheap round trip: is the database there? */
  ping(): Promise<void>;
  /** Runs `migrate` so that only one process migrates at a time. */
  migrateExclusively(migrate: () => Promise<void>): Promise<void>;
}
