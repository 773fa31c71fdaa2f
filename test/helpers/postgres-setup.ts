/**
 * Before the PostgreSQL project runs: is the server there? One clear message instead of
 * hundreds of connection errors. `.ci/run` starts PostgreSQL when it is down.
 */
import pg from 'pg';
import { redactUrl } from '../../src/config/config.js';
import { POSTGRES_ADMIN_URL } from './test-database.js';

export async function setup(): Promise<void> {
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
        'Start it (see README, "Running the tests") or set PLAUDER_TEST_POSTGRES_URL.',
    );
  } finally {
    await client.end().catch(() => {});
  }
}
