/**
 * @module storage/create-database
 * The one place that turns `DatabaseConfig` into a Kysely instance and migrates it.
 * SQLite: WAL (readers never block the writer, several processes may share the file),
 * a busy timeout, `BEGIN IMMEDIATE` transactions and a prepared-statement cache.
 */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  Migrator,
  SqliteDialect,
  SqliteDriver,
} from 'kysely';
import type { DatabaseConfig } from '../config/config.js';
import { migrationProvider } from './migrations/index.js';
import type { Database } from './schema.js';

export interface Store {
  readonly db: Kysely<Database>;
  /** Cheap round trip for readiness checks. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

const BUSY_TIMEOUT_MS = 5000;
const STATEMENT_CACHE_SIZE = 256;

export async function createStore(config: DatabaseConfig): Promise<Store> {
  const sqlite = openSqlite(config.file);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect(sqlite) });
  try {
    await migrate(db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return {
    db,
    ping: async () => {
      sqlite.prepare('select 1').get();
    },
    close: () => db.destroy(),
  };
}

function openSqlite(file: string): SqliteDatabase.Database {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file, { timeout: BUSY_TIMEOUT_MS });
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  return withStatementCache(sqlite);
}

/**
 * Kysely prepares every query anew; the hot path runs the same few statements, so
 * keep them prepared. better-sqlite3 is synchronous, so sharing a statement is safe.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDatabase.Database {
  const cache = new Map<string, SqliteDatabase.Statement>();
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      statement = prepare(source);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
      cache.set(source, statement);
    }
    return statement;
  }) as typeof sqlite.prepare;
  return sqlite;
}

/** Takes the write lock when a transaction starts, so the busy timeout applies to it. */
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly sqlite: SqliteDatabase.Database) {
    super({ database: sqlite });
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver({ database: this.sqlite });
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/**
 * Several processes may start at once on one file. Kysely creates its bookkeeping tables
 * outside the migration transaction, so a loser of that race retries once the winner is done.
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
