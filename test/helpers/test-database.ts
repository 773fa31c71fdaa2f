/**
 * A database of its own for each test server: a temporary SQLite file, or a PostgreSQL
 * database created for the test and dropped afterwards, so runs never collide.
 * `PLAUDER_TEST_DIALECT` (set per vitest project) picks the dialect.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { inject } from 'vitest';

export type TestDialect = 'sqlite' | 'postgres';

export const TEST_DIALECT: TestDialect =
  process.env.PLAUDER_TEST_DIALECT === 'postgres' ? 'postgres' : 'sqlite';

/** Where test databases are created; the server needs trust auth or a password in the URL. */
export const POSTGRES_ADMIN_URL =
  process.env.PLAUDER_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  readonly dialect: TestDialect;
  /** A scratch directory (the SQLite file lives here). */
  readonly dir: string;
  /** The SQLite file; empty for PostgreSQL. */
  readonly file: string;
  /** PostgreSQL: the database name; SQLite: the file name. */
  readonly name: string;
  /** PLAUDER_DATABASE_URL and, for PostgreSQL, the shared PLAUDER_SECRET. */
  readonly env: Readonly<Record<string, string>>;
  /**
   * Everything the database holds on disk, for canary greps: the SQLite file with its
   * -wal and -shm; for PostgreSQL a data dump plus the database's data files and the WAL
   * segments written since the database was handed out (see `postgresFiles`).
   */
  contents(): Promise<Buffer>;
  drop(): Promise<void>;
}

export function tempDir(prefix = 'plauder-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * `adminUrl`: create the PostgreSQL database on another server (e.g. a private one).
 * A PostgreSQL database on the shared server is a copy of the project's migrated template
 * (postgres-setup.ts) unless `empty` is asked for (a test of the migrations themselves);
 * one on another server is empty. A SQLite file is always created by its first server.
 *
 * A copy of the template is not dropped when its test is done but emptied (the rows of
 * every table but the migrations' deleted) and given to the next test of this process,
 * as long as its tables are still the template's; postgres-setup.ts drops them all at
 * the end.
 */
export async function createTestDatabase(
  dialect = TEST_DIALECT,
  adminUrl = POSTGRES_ADMIN_URL,
  { empty = false }: { empty?: boolean } = {},
): Promise<TestDatabase> {
  const dir = tempDir();
  if (dialect === 'sqlite') return sqliteDatabase(dir);
  const template = empty || adminUrl !== POSTGRES_ADMIN_URL ? undefined : migratedTemplate();
  return await postgresDatabase(dir, adminUrl, template);
}

/** The template the PostgreSQL project provides; none in the SQLite project. */
function migratedTemplate(): string | undefined {
  return inject('postgresTemplate');
}

/** Copies of the template, emptied, ready for the next test of this process. */
const spares: string[] = [];

/** The prefix of the copies of a template, so that the project's teardown finds them all. */
export function copyPrefix(template: string): string {
  return `plauder_test_${template.slice(template.lastIndexOf('_') + 1)}_`;
}

/** The tables, columns and applied migrations, to tell whether a test changed the schema. */
const SCHEMA_QUERY = `select coalesce(string_agg(table_name || '.' || column_name || ':' || data_type, ',' order by table_name, column_name), '')
    || ' ' || (select string_agg(name, ',' order by name) from kysely_migration) as schema
  from information_schema.columns where table_schema = 'public'`;

let templateSchema: Promise<string> | undefined;

/**
 * Empties a copy of the template for the next test, when its tables are still the
 * template's (a test may have dropped one); false when it must be dropped instead.
 */
async function recycled(adminUrl: string, name: string, template: string): Promise<boolean> {
  templateSchema ??= withClient(
    databaseUrl(adminUrl, template),
    async (client) => (await client.query(SCHEMA_QUERY)).rows[0].schema as string,
  );
  return withClient(databaseUrl(adminUrl, name), async (client) => {
    // A server process the test killed may not have been noticed by PostgreSQL yet.
    await client.query(
      'select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [name],
    );
    if ((await client.query(SCHEMA_QUERY)).rows[0].schema !== (await templateSchema)) return false;
    const tables = await client.query<{ name: string }>(
      `select quote_ident(tablename) as name from pg_tables
        where schemaname = 'public' and tablename not like 'kysely_migration%'`,
    );
    // DELETE rather than TRUNCATE: a test leaves few rows, and TRUNCATE makes new files.
    // The tables have no sequences to restart; foreign keys cascade.
    await client.query(tables.rows.map((t) => `delete from ${t.name};`).join(''));
    return true;
  });
}

function sqliteDatabase(dir: string): TestDatabase {
  const file = path.join(dir, 'plauder.db');
  return {
    dialect: 'sqlite',
    dir,
    file,
    name: 'plauder.db',
    env: { PLAUDER_DATABASE_URL: `sqlite:${file}` },
    async contents() {
      return Buffer.concat(
        fs
          .readdirSync(dir)
          .filter((name) => name.startsWith('plauder.db'))
          .map((name) => fs.readFileSync(path.join(dir, name))),
      );
    },
    async drop() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresDatabase(
  dir: string,
  adminUrl: string,
  template: string | undefined,
): Promise<TestDatabase> {
  const admin = <T>(run: (client: pg.Client) => Promise<T>) => withClient(adminUrl, run);
  const spare = template === undefined ? undefined : spares.pop();
  const prefix = template === undefined ? 'plauder_test_' : copyPrefix(template);
  const name = spare ?? `${prefix}${process.pid}_${randomBytes(5).toString('hex')}`;
  if (spare === undefined) {
    const from = template === undefined ? '' : ` template "${template}"`;
    await admin((client) => client.query(`create database "${name}"${from}`));
  }
  const url = databaseUrl(adminUrl, name);
  const handedOutAt = Date.now();
  return {
    dialect: 'postgres',
    dir,
    file: '',
    name,
    env: {
      PLAUDER_DATABASE_URL: url,
      PLAUDER_SECRET: randomBytes(32).toString('base64'),
      PLAUDER_DATABASE_POOL_SIZE: '4',
    },
    async contents() {
      const dump = await promisify(execFile)('pg_dump', ['--data-only', url], {
        maxBuffer: 256 * 1024 * 1024,
        encoding: 'buffer',
      });
      return Buffer.concat([dump.stdout, ...(await postgresFiles(adminUrl, name, handedOutAt))]);
    },
    async drop() {
      fs.rmSync(dir, { recursive: true, force: true });
      if (template !== undefined && (await recycled(adminUrl, name, template).catch(() => false))) {
        spares.push(name);
        return;
      }
      await admin((client) => client.query(`drop database if exists "${name}" with (force)`));
    },
  };
}

/**
 * How much earlier than the database was handed out a WAL segment's modification time may
 * be and still be read: file times come from the kernel's coarse clock, a few ms behind.
 */
const WAL_CLOCK_MARGIN_MS = 1000;

/**
 * The database's own data files and the cluster's WAL segments written since `since`,
 * where readable (tests run as root). Older segments (PostgreSQL keeps up to
 * `max_wal_size` of them for reuse, 1 GB by default) hold nothing this test wrote: read
 * whole, a cluster that a load test had used made the contents larger than a string may be.
 */
async function postgresFiles(adminUrl: string, name: string, since: number): Promise<Buffer[]> {
  const { dataDir, oid } = await withClient(adminUrl, async (client) => {
    await client.query('checkpoint');
    const dataDir = (await client.query('show data_directory')).rows[0].data_directory as string;
    const row = (await client.query('select oid from pg_database where datname = $1', [name]))
      .rows[0];
    return { dataDir, oid: String(row.oid) };
  });
  const files: Buffer[] = [];
  const folders = [
    { folder: path.join(dataDir, 'base', oid), since: Number.NEGATIVE_INFINITY },
    { folder: path.join(dataDir, 'pg_wal'), since: since - WAL_CLOCK_MARGIN_MS },
  ];
  for (const { folder, since: modifiedSince } of folders) {
    let names: string[];
    try {
      names = fs.readdirSync(folder);
    } catch {
      continue;
    }
    for (const file of names) {
      const full = path.join(folder, file);
      const stat = fs.statSync(full);
      if (stat.isFile() && stat.mtimeMs >= modifiedSince) files.push(fs.readFileSync(full));
    }
  }
  return files;
}

/** The URL of database `name` on the server of `adminUrl`. */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.href;
}

export async function withClient<T>(
  url: string,
  run: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
