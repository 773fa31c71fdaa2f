/**
 * Before the PostgreSQL project runs: is the server there? One clear message instead of
 * hundreds of connection errors. `.ci/run` starts PostgreSQL when it is down.
 *
 * Then one database is created and migrated as the template of every test database (see
 * test-database.ts): copying it is quicker than migrating each of the hundreds of
 * databases the project creates. Dropped when the project ends, with the copies the
 * tests kept for reuse.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { loadConfig, redactUrl } from '../../src/config/config.js';
import { createStore } from '../../src/storage/create-database.js';
import { copyPrefix, databaseUrl, POSTGRES_ADMIN_URL, withClient } from './test-database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated database test databases are copied from. */
    postgresTemplate: string;
  }
}

export async function setup(project: TestProject): Promise<() => Promise<void>> {
  await reachable();
  const template = `plauder_template_${process.pid}_${randomBytes(5).toString('hex')}`;
  await withClient(POSTGRES_ADMIN_URL, (client) => client.query(`create database "${template}"`));
  const config = loadConfig({
    PLAUDER_DATABASE_URL: databaseUrl(POSTGRES_ADMIN_URL, template),
    PLAUDER_SECRET: randomBytes(32).toString('base64'),
  });
  const store = await createStore(config.database);
  await store.close();
  project.provide('postgresTemplate', template);
  return async () => {
    await withClient(POSTGRES_ADMIN_URL, async (client) => {
      // The copies the tests kept for reuse (test-database.ts), then the template.
      const copies = await client.query<{ datname: string }>(
        'select datname from pg_database where starts_with(datname, $1)',
        [copyPrefix(template)],
      );
      for (const { datname } of copies.rows) {
        await client.query(`drop database if exists "${datname}" with (force)`);
      }
      await client.query(`drop database if exists "${template}" with (force)`);
    });
  };
}

async function reachable(): Promise<void> {
  const client = new pg.Client({
    connectionString: POSTGRES_ADMIN_URL,
    connectionTimeoutMillis: 5000,
  });
  try {
    await client.connect();
    await client.query('select 1');
  } catch (error) {
    throw new Error(
      `PostgreSQL is not reachable at ${redactUrl(POSTGRES_ADMIN_URL)} (${(error as Error).message}). ` +
        'Start it (see README, "The tests") or set PLAUDER_TEST_POSTGRES_URL.',
    );
  } finally {
    await client.end().catch(() => {});
  }
}
