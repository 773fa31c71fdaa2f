/**
 * The hot path's statements on PostgreSQL are named (src/storage/postgres/named-statements.ts):
 * each connection parses and plans them once. A statement prepared before another instance
 * changed the schema, as a rolling upgrade's migration does, still runs.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { recordingCore } from '../helpers/recording-core.js';
import { databaseUrl, POSTGRES_ADMIN_URL, withClient } from '../helpers/test-database.js';
import { chat, startTestServer, type TestServer } from '../helpers/test-server.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

/** One connection, so that what the test reads is what the requests' connection holds. */
async function oneConnectionServer(): Promise<TestServer> {
  const server = await startTestServer({
    core: recordingCore().core,
    env: { PLAUDER_DATABASE_POOL_SIZE: '1' },
  });
  cleanup.push(() => server.close());
  return server;
}

async function preparedStatements(server: TestServer): Promise<Map<string, string>> {
  const { rows } = await sql<{ name: string; statement: string }>`
    select name, statement from pg_prepared_statements order by name`.execute(
    server.services.store.db,
  );
  return new Map(rows.map((row) => [row.name, row.statement]));
}

async function turns(server: TestServer, key: string, count: number, sessionId: string) {
  for (let i = 0; i < count; i++) {
    const res = await chat(server, key, { message: `turn ${i}`, sessionId });
    expect(res.status).toBe(200);
  }
}

describe('named statements on PostgreSQL', () => {
  it('are prepared once per connection and reused by every later turn', async () => {
    const server = await oneConnectionServer();
    const { key } = await server.createKey();
    await turns(server, key, 3, 'a');

    const prepared = await preparedStatements(server);
    const statements = [...prepared.values()];
    // The reservation (the month's upsert) and the turn's write are among them.
    expect(statements.some((text) => /insert into "usage"/i.test(text))).toBe(true);
    expect(statements.some((text) => /"sessions"/i.test(text))).toBe(true);
    for (const name of prepared.keys()) expect(name).toMatch(/^plauder_\d+$/);

    // More turns, on this session and a new one, prepare nothing new.
    await turns(server, key, 5, 'a');
    await turns(server, key, 2, 'b');
    await turns(server, key, 2, 'a');
    const later = await preparedStatements(server);
    const known = [...prepared.keys()];
    for (const name of known) expect(later.get(name)).toBe(prepared.get(name));
    // A new session's first turn inserts where the others updated: at most that is new.
    expect(later.size - prepared.size).toBeLessThanOrEqual(2);
    await turns(server, key, 3, 'c');
    expect((await preparedStatements(server)).size).toBe(later.size);
  });

  it('still run after another process changed a column they return (a rolling upgrade)', async () => {
    const server = await oneConnectionServer();
    const { key } = await server.createKey();
    await turns(server, key, 2, 'a');
    expect((await preparedStatements(server)).size).toBeGreaterThan(0);

    // Another process migrates: a column the reservation returns changes its type.
    await withClient(databaseUrl(POSTGRES_ADMIN_URL, server.database.name), (client) =>
      client.query('alter table usage alter column used type bigint'),
    );

    // The first run finds the statement's plan stale; its connection is replaced and the
    // statement runs again, unnamed: the client sees none of it.
    await turns(server, key, 3, 'a');
    expect(await usedThisMonth(server)).toBe(5);
    // The new connection prepares the statements anew, for the new column type.
    expect((await preparedStatements(server)).size).toBeGreaterThan(0);
    await turns(server, key, 2, 'a');
    expect(await usedThisMonth(server)).toBe(7);
  });
});

/** The month's count as the database holds it (one key, one month). */
async function usedThisMonth(server: TestServer): Promise<number> {
  const { rows } = await sql<{ used: number | string }>`select used from usage`.execute(
    server.services.store.db,
  );
  expect(rows).toHaveLength(1);
  return Number(rows[0]?.used);
}
