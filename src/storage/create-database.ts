/**
 * @module storage/create-database
 * The one place that chooses the database from `DatabaseConfig` (SQLite or PostgreSQL),
 * opens it and migrates it. Everything above works with `Store` and never asks which.
 */
import type { Kysely } from 'kysely';
import { Migrator } from 'kysely';
import { type DatabaseConfig, redactUrl } from '../config/config.js';
import type { OpenedDatabase, StoreFeatures } from './dialect.js';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: DatabaseConfig['dialect'];
  readonly features: StoreFeatures;
  /** Cheap round trip for readiness checks. */
  ping(): Promise<void>;
  /**
   * Why the schema is not the one this build expects (missing, or migrations not yet
   * applied), or undefined when it is. Reads the migration table only.
   */
  schemaProblem(): Promise<string | undefined>;
  close(): Promise<void>;
}

export async function createStore(config: DatabaseConfig): Promise<Store> {
  // Only the chosen driver is loaded: a process on SQLite never holds the pg client in memory.
  const opened: OpenedDatabase =
    config.dialect === 'sqlite'
      ? (await import('./sqlite/open-sqlite.js')).openSqlite(config.file)
      : (await import('./postgres/open-postgres.js')).openPostgres(config);
  const { db } = opened;
  try {
    await opened.migrateExclusively(() => migrate(db));
  } catch (error) {
    await db.destroy().catch(() => {});
    await opened.close?.().catch(() => {});
    throw new Error(`Cannot open the database ${describe(config)}: ${reason(error)}`, {
      cause: error,
    });
  }
  return {
    db,
    dialect: config.dialect,
    features: opened.features,
    ping: opened.ping,
    schemaProblem: () => schemaProblem(db),
    close: async () => {
      await db.destroy();
      await opened.close?.();
    },
  };
}

async function schemaProblem(db: Kysely<Database>): Promise<string | undefined> {
  const migrations = await new Migrator({ db, provider: migrationProvider }).getMigrations();
  // With one migration (the initial schema) a schema is either there or missing.
  if (migrations.some((migration) => migration.executedAt === undefined)) {
    return 'the database schema is missing';
  }
  return undefined;
}

function describe(config: DatabaseConfig): string {
  return config.dialect === 'sqlite' ? config.file : redactUrl(config.url);
}

/** The innermost message: "connect ECONNREFUSED …" says more than "migration failed". */
function reason(error: unknown): string {
  let current = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}

/**
 * Kysely creates its bookkeeping tables outside the migration transaction, so on SQLite
 * a loser of that race retries once the winner is done.
 */
async function migrate(db: Kysely<Database>, attempts = 5): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) return;
    if (attempt >= attempts) {
      const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'setup';
      throw new Error(`Database migration ${failed} failed`, { cause: error });
    }
    await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
  }
}
