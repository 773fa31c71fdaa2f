/**
 * The hot path's statements on PostgreSQL (src/storage/postgres/named-statements.ts) are
 * named, so each lane parses and plans them once, and pipelined: those of one round of I/O
 * go to one lane in one write, each still its own transaction. A statement prepared before
 * another instance changed the schema, as a rolling upgrade's migration does, still runs.
 */
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createStore, type Store } from '../../src/storage/create-database.js';
import { LANE_DEPTH } from '../../src/storage/postgres/named-statements.js';
import { prepareQuery, queryTarget } from '../../src/storage/prepared-query.js';
import { recordingCore } from '../helpers/recording-core.js';
import {
  createTestDatabase,
  databaseUrl,
  POSTGRES_ADMIN_URL,
  withClient,
} from '../helpers/test-database.js';
import { chat, startTestServer, type TestServer } from '../helpers/test-server.js';

const cleanup: (() => Promise<unknown>)[] = [];
const target = (store: Store) => queryTarget(store.db, store.features);
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

/** What a lane's session has prepared: read by a prepared query, which runs on a lane. */
async function preparedStatements(server: TestServer): Promise<Map<string, string>> {
  const db = server.services.store.db as unknown as Kysely<PgCatalog>;
  const query = prepareQuery<Record<string, never>, { name: string; statement: string }>(() =>
    db
      .selectFrom('pg_prepared_statements')
      .select(['name', 'statement'])
      .where('name', 'like', 'plauder%')
      .orderBy('name'),
  );
  const { rows } = await query(target(server.services.store), {});
  return new Map(rows.map((row) => [row.name, row.statement]));
}

interface PgCatalog {
  pg_prepared_statements: { name: string; statement: string };
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

describe('pipelined statements on PostgreSQL', () => {
  /** A store of its own on a fresh database, with a table to probe. */
  async function probeStore(
    poolSize: number,
    { closedByTest = false } = {},
  ): Promise<Store & { readonly databaseName: string }> {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    const config = loadConfig({ ...database.env, PLAUDER_DATABASE_POOL_SIZE: String(poolSize) });
    const store = await createStore(config.database);
    if (!closedByTest) cleanup.push(() => store.close());
    await sql`create table pipeline_probe (id integer primary key)`.execute(store.db);
    return Object.assign(store, { databaseName: database.name });
  }

  type ProbeTable = { pipeline_probe: { id: number } };
  /** An insert that may share a transaction: it names the row it locks. */
  const groupedInsert = (store: Store) => {
    const db = store.db as unknown as Kysely<ProbeTable>;
    const query = prepareQuery<{ id: number }, unknown>(
      (p) => db.insertInto('pipeline_probe').values({ id: p<number>('id') }),
      { lock: ({ id }) => `pipeline_probe\0${String(id).padStart(6, '0')}` },
    );
    return (id: number) => query(target(store), { id });
  };
  const storedIds = async (store: Store) => {
    const db = store.db as unknown as Kysely<ProbeTable>;
    const rows = await db.selectFrom('pipeline_probe').select('id').orderBy('id').execute();
    return rows.map((row) => row.id);
  };
  /** A read whose answer tells the transaction it ran in. */
  const transactionOf = (store: Store) => {
    const db = store.db as unknown as Kysely<Record<string, never>>;
    const query = prepareQuery<{ n: number }, { tx: number; n: number }>((p) =>
      db.selectNoFrom((eb) => [
        sql<number>`txid_current()`.as('tx'),
        eb.cast<number>(eb.val(p<number>('n')), 'integer').as('n'),
      ]),
    );
    return async (n: number) => (await query(target(store), { n })).rows[0];
  };

  it('runs the reads and named-lock writes of one round in one transaction, after a first run alone', async () => {
    const store = await probeStore(1);
    const read = transactionOf(store);
    const insert = groupedInsert(store);
    // The first run on a lane parses the statement and learns its columns: alone.
    const first = await read(0);
    await insert(100);
    const round = await Promise.all([1, 2, 3, 4, 5].map((n) => read(n)));
    const writes = await Promise.all([1, 2, 3].map((id) => insert(id)));
    // Each read has its own answer, all from one transaction, not the first run's.
    expect(round.map((row) => row?.n)).toEqual([1, 2, 3, 4, 5]);
    expect(new Set(round.map((row) => row?.tx)).size).toBe(1);
    expect(round[0]?.tx).not.toBe(first?.tx);
    expect(writes.map((result) => result.numAffectedRows)).toEqual([1n, 1n, 1n]);
    expect(await storedIds(store)).toEqual([1, 2, 3, 100]);
  });

  it('runs a select that locks rows (for update) alone, outside the group', async () => {
    const store = await probeStore(1);
    const read = transactionOf(store);
    const db = store.db as unknown as Kysely<ProbeTable>;
    const locking = prepareQuery<{ id: number }, { tx: number }>((p) =>
      db
        .selectFrom('pipeline_probe')
        .select(sql<number>`txid_current()`.as('tx'))
        .where('id', '=', p<number>('id'))
        .forUpdate(),
    );
    await groupedInsert(store)(1);
    await read(0);
    await locking(target(store), { id: 1 });
    const [a, b, locked] = await Promise.all([read(1), read(2), locking(target(store), { id: 1 })]);
    expect(a?.tx).toBe(b?.tx);
    expect(locked.rows).toHaveLength(1);
    expect(locked.rows[0]?.tx).not.toBe(a?.tx);
  });

  it('runs each statement of a group that failed again on its own: the one at fault fails alone', async () => {
    const store = await probeStore(1);
    const insert = groupedInsert(store);
    await insert(100);
    const outcomes = await Promise.allSettled([3, 2, 2, 1].map((id) => insert(id)));
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
    ]);
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    expect(((failed as PromiseRejectedResult).reason as { code?: string }).code).toBe('23505');
    expect(await storedIds(store)).toEqual([1, 2, 3, 100]);
  });

  it('locks rows in one order in every group: two instances writing the same rows in opposite orders never deadlock', async () => {
    const store = await probeStore(1);
    const other = await createStore(
      loadConfig({
        PLAUDER_DATABASE_URL: databaseUrl(POSTGRES_ADMIN_URL, store.databaseName),
        PLAUDER_SECRET: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      }).database,
    );
    cleanup.push(() => other.close());
    await sql`create table lock_probe (id integer primary key, n integer not null)`.execute(
      store.db,
    );
    await sql`insert into lock_probe values (1, 0), (2, 0), (3, 0)`.execute(store.db);
    // Each update holds its row a while, so that the two groups overlap.
    const bump = (on: Store) => {
      const db = on.db as unknown as Kysely<{ lock_probe: { id: number; n: number } }>;
      const query = prepareQuery<{ id: number }, unknown>(
        (p) =>
          db
            .updateTable('lock_probe')
            .set((eb) => ({ n: eb('n', '+', sql<number>`(select 1 from pg_sleep(0.05))`) }))
            .where('id', '=', p<number>('id')),
        { lock: ({ id }) => `lock_probe\0${id}` },
      );
      return (id: number) => query(target(on), { id });
    };
    const a = bump(store);
    const b = bump(other);
    await Promise.all([a(3), b(3)]);
    const deadlocks = async () => {
      const { rows } = await sql<{ deadlocks: number }>`
        select deadlocks::int from pg_stat_database where datname = current_database()`.execute(
        store.db,
      );
      return rows[0]?.deadlocks ?? 0;
    };
    const before = await deadlocks();
    for (let round = 0; round < 3; round++) {
      await Promise.all([a(2), a(1), b(1), b(2)]);
    }
    const { rows } = await sql<{ id: number; n: number }>`
      select id, n from lock_probe order by id`.execute(store.db);
    expect(rows).toEqual([
      { id: 1, n: 6 },
      { id: 2, n: 6 },
      { id: 3, n: 2 },
    ]);
    // pg_stat_database is updated when a session reports its statistics: give it a moment.
    await sql`select pg_stat_clear_snapshot()`.execute(store.db);
    expect(await deadlocks()).toBe(before);
  });

  type Probe = { pid: number };
  const backendOf = (store: Store, sleep = 0) => {
    const query = prepareQuery<{ sleep: number }, Probe>((p) =>
      (store.db as unknown as Kysely<Record<string, never>>).selectNoFrom((eb) => [
        eb.fn<number>('pg_backend_pid').as('pid'),
        eb.fn('pg_sleep', [eb.cast(eb.val(p<number>('sleep')), 'double precision')]).as('slept'),
      ]),
    );
    return async () => (await query(target(store), { sleep })).rows[0]?.pid;
  };

  it('sends the statements of one round of I/O to one connection, apart from the pool', async () => {
    const store = await probeStore(4);
    const pid = backendOf(store);
    const pids = await Promise.all(Array.from({ length: 50 }, () => pid()));
    expect(new Set(pids).size).toBe(1);
    expect(pids[0]).toEqual(expect.any(Number));
    // The pool's connections (Kysely's own queries) are other sessions.
    const { rows } = await sql<Probe>`select pg_backend_pid() as pid`.execute(store.db);
    expect(rows[0]?.pid).not.toBe(pids[0]);
    // A second round while the first lane has nothing in flight takes the same lane.
    expect(await pid()).toBe(pids[0]);
  });

  it('runs a group again, statement by statement, when the database broke a deadlock by failing it', async () => {
    const store = await probeStore(2);
    await sql`create table lock_probe (id integer primary key, n integer not null)`.execute(
      store.db,
    );
    await sql`insert into lock_probe values (1, 0), (2, 0)`.execute(store.db);
    const db = store.db as unknown as Kysely<{ lock_probe: { id: number; n: number } }>;
    const bump = prepareQuery<{ id: number }, unknown>(
      (p) =>
        db
          .updateTable('lock_probe')
          .set((eb) => ({ n: eb('n', '+', 1) }))
          .where('id', '=', p<number>('id')),
      { lock: ({ id }) => `lock_probe\0${id}` },
    );
    const deadlocks = async () => {
      const { rows } = await withClient(POSTGRES_ADMIN_URL, (client) =>
        client.query<{ deadlocks: number }>(
          'select deadlocks::int as deadlocks from pg_stat_database where datname = $1',
          [store.databaseName],
        ),
      );
      return rows[0]?.deadlocks ?? 0;
    };
    await bump(target(store), { id: 1 });
    const before = await deadlocks();
    // A transaction on the pool locks row 2, waits, then wants row 1; the group (rows 1,
    // then 2) starts waiting first, so its deadlock check fires first and it is the one
    // the database fails.
    let locked: () => void = () => {};
    const row2Locked = new Promise<void>((resolve) => {
      locked = resolve;
    });
    const transaction = store.db.transaction().execute(async (tx) => {
      await sql`update lock_probe set n = n + 10 where id = 2`.execute(tx);
      locked();
      await sql`select pg_sleep(0.5)`.execute(tx);
      await sql`update lock_probe set n = n + 10 where id = 1`.execute(tx);
    });
    await row2Locked;
    const group = await Promise.all([
      bump(target(store), { id: 2 }),
      bump(target(store), { id: 1 }),
    ]);
    await transaction;
    expect(group.map((result) => result.numAffectedRows)).toEqual([1n, 1n]);
    const { rows } = await sql<{ id: number; n: number }>`
      select id, n from lock_probe order by id`.execute(store.db);
    expect(rows).toEqual([
      { id: 1, n: 12 },
      { id: 2, n: 11 },
    ]);
    // The database counted the deadlock (statistics reach pg_stat_database within a second).
    for (let waited = 0; (await deadlocks()) === before && waited < 40; waited++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await deadlocks()).toBe(before + 1);
  });

  it('opens another lane while every lane has many statements in flight, up to half the pool size', async () => {
    const store = await probeStore(4);
    const slow = backendOf(store, 0.05);
    const first = Array.from({ length: LANE_DEPTH }, () => slow());
    // The next round of I/O finds the first lane LANE_DEPTH deep.
    await new Promise((resolve) => setImmediate(resolve));
    const second = Array.from({ length: LANE_DEPTH }, () => slow());
    await new Promise((resolve) => setImmediate(resolve));
    // Two lanes at most (half the pool size): the third round shares one of them.
    const third = Array.from({ length: 2 }, () => slow());
    const [a, b, c] = await Promise.all([first, second, third].map((round) => Promise.all(round)));
    expect(new Set(a).size).toBe(1);
    expect(new Set(b).size).toBe(1);
    expect(a?.[0]).not.toBe(b?.[0]);
    expect([a?.[0], b?.[0]]).toContain(c?.[0]);
  });

  it('holds no more connections than the pool size, lanes and pool together', async () => {
    const store = await probeStore(4);
    const slow = backendOf(store, 0.05);
    const lanes: Promise<unknown>[] = [];
    for (let round = 0; round < 3; round++) {
      lanes.push(...Array.from({ length: LANE_DEPTH }, () => slow()));
      await new Promise((resolve) => setImmediate(resolve));
    }
    const transactions = Array.from({ length: 6 }, () =>
      store.db.transaction().execute((tx) => sql`select pg_sleep(0.3)`.execute(tx)),
    );
    let done = false;
    const all = Promise.all([...lanes, ...transactions]).finally(() => {
      done = true;
    });
    let most = 0;
    while (!done) {
      const { rows } = await withClient(POSTGRES_ADMIN_URL, (client) =>
        client.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
           where application_name = 'plauder' and datname = $1`,
          [store.databaseName],
        ),
      );
      most = Math.max(most, rows[0]?.n ?? 0);
    }
    await all;
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(4);
  });

  it('reads every run of a statement alike, its columns parsed by type', async () => {
    const store = await probeStore(1);
    const db = store.db as unknown as Kysely<Record<string, never>>;
    const query = prepareQuery<{ n: number; text: string | null }, Record<string, unknown>>((p) =>
      db.selectNoFrom((eb) => [
        eb.cast<number>(eb.val(p<number>('n')), 'bigint').as('big'),
        eb.cast<number>(eb.val(p<number>('n')), 'integer').as('small'),
        eb.cast<string | null>(eb.val(p<string | null>('text')), 'text').as('text'),
        eb(eb.cast(eb.val(p<number>('n')), 'integer'), '>', 1).as('more'),
        sql<unknown>`json_build_object('n', ${eb.cast(eb.val(p<number>('n')), 'integer')})`.as(
          'json',
        ),
      ]),
    );
    const first = (await query(target(store), { n: 2, text: 'zwei' })).rows;
    const later = await Promise.all([
      query(target(store), { n: 3, text: null }),
      query(target(store), { n: 1, text: 'eins' }),
    ]);
    expect(first).toEqual([{ big: 2, small: 2, text: 'zwei', more: true, json: { n: 2 } }]);
    expect(later.map((result) => result.rows)).toEqual([
      [{ big: 3, small: 3, text: null, more: true, json: { n: 3 } }],
      [{ big: 1, small: 1, text: 'eins', more: false, json: { n: 1 } }],
    ]);
  });

  it('commits a write that names no rows it locks on its own: one that fails fails alone', async () => {
    const store = await probeStore(1);
    const db = store.db as unknown as Kysely<{ pipeline_probe: { id: number } }>;
    const insert = prepareQuery<{ id: number }, unknown>((p) =>
      db.insertInto('pipeline_probe').values({ id: p<number>('id') }),
    );
    const outcomes = await Promise.allSettled(
      [1, 2, 2, 3, 4].map((id) => insert(target(store), { id })),
    );
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    const failed = outcomes[2] as PromiseRejectedResult;
    expect((failed.reason as { code?: string }).code).toBe('23505');
    const stored = await db.selectFrom('pipeline_probe').select('id').orderBy('id').execute();
    expect(stored.map((row) => row.id)).toEqual([1, 2, 3, 4]);
  });

  it('replaces a lane whose connection the server ended', async () => {
    const store = await probeStore(1);
    const pid = backendOf(store);
    const before = await pid();
    await sql`select pg_terminate_backend(${before})`.execute(store.db);
    // Until the server has ended that session (its message reaches the lane before this
    // poll's answer reaches the pool).
    for (;;) {
      const { rows } = await sql<Probe>`
        select pid from pg_stat_activity where pid = ${before}`.execute(store.db);
      if (rows.length === 0) break;
    }
    const after = await pid();
    expect(after).toEqual(expect.any(Number));
    expect(after).not.toBe(before);
  });

  it('answers what was sent, then ends its lanes and takes nothing more, when the store is closed', async () => {
    const store = await probeStore(1, { closedByTest: true });
    const pid = backendOf(store, 0.2);
    const lane = await pid();
    const sent = pid();
    // Once it is on the wire, close: the lane ends after answering it.
    await new Promise((resolve) => setImmediate(resolve));
    await store.close();
    expect(await sent).toBe(lane);
    await expect(pid()).rejects.toThrow(/closed/);
    // The server ends the session soon after the lane said goodbye.
    for (;;) {
      const { rows } = await withClient(POSTGRES_ADMIN_URL, (client) =>
        client.query('select pid from pg_stat_activity where pid = $1', [lane]),
      );
      if (rows.length === 0) break;
    }
  });
});
