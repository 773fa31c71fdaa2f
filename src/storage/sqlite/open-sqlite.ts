/**
 * @module storage/sqlite/open-sqlite
 * The embedded store. WAL (readers never block the writer, several processes may share
 * the file), a busy timeout, `BEGIN IMMEDIATE` transactions, a prepared-statement cache
 * (handed to Kysely and the direct runner, not patched into the connection),
 * and the hot path's statements run directly with group commit (direct-runner.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  type SqliteDatabase as KyselySqliteDatabase,
  SqliteDialect,
  SqliteDriver,
} from 'kysely';
import type { OpenedDatabase } from '../dialect.js';
import type { Database } from '../schema.js';
import { startCheckpointer } from './checkpointer.js';
import { createDirectRunner, type Prepare } from './direct-runner.js';

const BUSY_TIMEOUT_MS = 5000;
const STATEMENT_CACHE_SIZE = 256;
const PAGE_CACHE_KIB = 4096;
const DATA_VERSION_REUSE_MS = 5;
const CHECKPOINT_INTERVAL_MS = 1000;
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export function openSqlite(file: string): OpenedDatabase {
  if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
  const sqlite = new SqliteDatabase(file, { timeout: BUSY_TIMEOUT_MS });
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // A smaller page cache than better-sqlite3's default: the operating system caches the file
  // anyway, and the smaller one kept the same throughput with less memory.
  sqlite.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
  // Checkpoints on a timer, not inside the commit that fills 1000 pages: SQLite runs its
  // automatic checkpoint inside that commit, and every few hundred requests one request
  // waited for the sync to disk.
  sqlite.pragma('wal_autocheckpoint = 0');
  // When the WAL starts over, a file grown past this (by a burst of writes) is cut back.
  sqlite.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  const checkpointer =
    file === ':memory:'
      ? undefined
      : startCheckpointer(sqlite, file, { intervalMs: CHECKPOINT_INTERVAL_MS });
  const prepare = statementCache(sqlite);
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ prepare, close: () => sqlite.close() }),
  });
  const dataVersion = sqlite.prepare('pragma data_version').pluck();
  // Reading data_version takes SQLite's shared lock, too dear to pay on every request: it is
  // read again after DATA_VERSION_REUSE_MS at the earliest.
  let version = 0;
  let versionReadAt = Number.NEGATIVE_INFINITY;
  const changesElsewhere = () => {
    const now = performance.now();
    if (now - versionReadAt >= DATA_VERSION_REUSE_MS) {
      version = Number(dataVersion.get());
      versionReadAt = now;
    }
    return version;
  };
  return {
    db,
    features: {
      // One writer at a time: a conditional update claims rows without row locks.
      skipLocked: false,
      writingCtes: false,
      bytesInTextColumns: true,
      // SQLite's data_version moves when another connection commits, never for our own.
      changesElsewhere,
      statements: createDirectRunner(sqlite, prepare),
    },
    ping: async () => {
      prepare('select 1').get();
    },
    // Migrations take SQLite's write lock; racing processes wait on the busy timeout,
    // and `migrate` retries the bookkeeping set-up that Kysely runs outside it.
    migrateExclusively: (migrate) => migrate(),
    // After the connection: the worker's connection, closed last, checkpoints the rest.
    close: async () => {
      await checkpointer?.stop();
    },
  };
}

/**
 * Kysely prepares every query anew; the hot path runs the same few statements, so
 * keep them prepared. better-sqlite3 is synchronous, so sharing a statement is safe.
 * Handed explicitly to Kysely (as its database's `prepare`) and to the direct runner,
 * instead of patching the connection: the connection stays what better-sqlite3 made.
 */
function statementCache(sqlite: SqliteDatabase.Database): Prepare {
  const cache = new Map<string, SqliteDatabase.Statement>();
  return (source) => {
    let statement = cache.get(source);
    if (!statement) {
      statement = sqlite.prepare(source);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
      cache.set(source, statement);
    }
    return statement;
  };
}

/** Takes the write lock when a transaction starts, so the busy timeout applies to it. */
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(private readonly sqlite: KyselySqliteDatabase) {
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
