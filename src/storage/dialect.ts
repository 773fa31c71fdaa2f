/**
 * @module storage/dialect
 * What each database implementation (sqlite/, postgres/) hands to `createStore`.
 */
import type { Kysely } from 'kysely';
import type { BoundQuery, DirectRunner } from './prepared-query.js';
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
  /**
   * A column declared `text` keeps bytes given to it as bytes (SQLite: a value keeps its own
   * type whatever the column's); else such a column takes text only (see sealed-column.ts).
   */
  readonly bytesInTextColumns: boolean;
  /**
   * A number that changes (within a few milliseconds) whenever another connection, of
   * another process, commits to the database, and not for this process's own writes;
   * absent where it cannot be read cheaply.
   */
  readonly changesElsewhere?: () => number;
  /**
   * A statement that tells the other processes, at commit, that a key changed: run in every
   * transaction that changes a key, where `changesElsewhere` needs it (PostgreSQL).
   */
  readonly announceKeyChange?: BoundQuery;
  /**
   * Runs the prepared queries outside transactions itself (see prepared-query.ts): SQLite
   * on its connection with group commit, PostgreSQL as named statements on pipelined
   * connections; absent: Kysely runs them.
   */
  readonly statements?: DirectRunner;
}

export interface OpenedDatabase {
  readonly db: Kysely<Database>;
  readonly features: StoreFeatures;
  /** One cheap round trip: is the database there? */
  ping(): Promise<void>;
  /** Runs `migrate` so that only one process migrates at a time. */
  migrateExclusively(migrate: () => Promise<void>): Promise<void>;
  /** Releases what the database holds besides Kysely's connections. */
  close?(): Promise<void>;
}
