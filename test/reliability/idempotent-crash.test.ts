/**
 * An idempotent request whose server process is killed (SIGKILL) while the core runs is
 * charged once in all (docs/contract.md, "Idempotent retries"): a real `plauder serve` with the
 * openai core in front of the upstream fixture, which holds the first answer back; another
 * server on the same database; retries with the same Idempotency-Key. The claim's lease is
 * short here (PLAUDER_IDEMPOTENCY_LEASE) so that the retry soon gets past its 409s.
 *
 * The other server starts before the kill where the retry must take the claim over (its
 * sweep at start then finds the claim alive), and after the lease ran out where the sweep
 * must refund the unit of a claim nobody took over.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Upstream } from '../core/openai/upstream-process.js';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from '../helpers/test-database.js';
import { createKeyWithCli, sleep, usedOf } from './support/server-process.js';

let upstream: Upstream;
let database: TestDatabase;
let env: Record<string, string>;
const servers: ServerProcess[] = [];

// The worker's upstream process (test/helpers/process-fixtures.ts), reset before each test
// (it may hold steps a test of another file left).
test.beforeAll(async ({ upstreamProcess }) => {
  upstream = upstreamProcess;
  database = await createTestDatabase();
  env = { ...database.env, ...openAiEnv(upstream, { PLAUDER_IDEMPOTENCY_LEASE: '1s' }) };
});
beforeEach(() => upstream.reset());
afterEach(async () => {
  for (const server of servers.splice(0)) await server.stop('SIGKILL');
});
afterAll(async () => {
  await database?.drop();
});

async function serve(): Promise<ServerProcess> {
  const server = await startServerProcess(env);
  servers.push(server);
  return server;
}

interface Answer {
  readonly status: number;
  readonly replayed: boolean;
  readonly body: unknown;
}

async function send(server: ServerProcess, key: string, idempotencyKey: string): Promise<Answer> {
  const res = await fetch(`${server.url}/api/chat`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'idempotency-key': idempotencyKey,
    },
    body: JSON.stringify({ message: 'Hallo' }),
  });
  return {
    status: res.status,
    replayed: res.headers.get('idempotent-replayed') === 'true',
    body: await res.json(),
  };
}

/** Polls `probe` until it gives an answer, failing after 30 s. */
async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  const started = Date.now();
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() - started > 30_000) throw new Error('condition not reached within 30 s');
    await sleep(50);
  }
}

/**
 * Sends the request to a server of its own, kills it once the upstream has the request and
 * waits until nothing of it is left (on PostgreSQL its sessions too, see backendsGone).
 */
async function killedMidCore(key: string, idempotencyKey: string): Promise<void> {
  await upstream.script({ hang: true });
  const first = await serve();
  await killedOn(first, key, idempotencyKey);
  if (TEST_DIALECT === 'postgres') await backendsGone();
}

/** Sends the request to `first` and kills it once the upstream has the request. */
async function killedOn(first: ServerProcess, key: string, idempotencyKey: string): Promise<void> {
  const pending = send(first, key, idempotencyKey).catch(() => undefined);
  await until(async () => ((await upstream.received()).requests.length === 1 ? true : undefined));
  await first.stop('SIGKILL');
  expect(await pending).toBeUndefined();
}

describe(`an idempotent request killed mid-core (${TEST_DIALECT})`, () => {
  it('is charged once: the retry on a new server inherits the unit and replies', async () => {
    const { key } = await createKeyWithCli(env);
    await upstream.script({ hang: true });
    const [first, second] = await Promise.all([serve(), serve()]);
    await killedOn(first, key, 'crash-1');
    expect((await claims())[0]?.unit_month).not.toBeNull();

    let conflicts = 0;
    const answer = await until(async () => {
      const res = await send(second, key, 'crash-1');
      if (res.status !== 409) return res;
      conflicts++;
      return undefined;
    });
    expect(answer).toEqual({ status: 200, replayed: false, body: { reply: 'reply to: Hallo' } });
    expect(await usedOf(second.url, key)).toBe(1);
    const again = await send(second, key, 'crash-1');
    expect(again).toEqual({ status: 200, replayed: true, body: { reply: 'reply to: Hallo' } });
    expect(await usedOf(second.url, key)).toBe(1);
    expect((await upstream.received()).requests).toHaveLength(2);
    console.log(`[idempotent crash ${TEST_DIALECT}] ${conflicts} × 409 before the retry ran`);
  });

  it('charges once when two retries race on two servers after the crash: one reply, the other a replay or 409', async () => {
    const { key } = await createKeyWithCli(env);
    await upstream.script({ hang: true });
    const [first, second, third] = await Promise.all([serve(), serve(), serve()]);
    await killedOn(first, key, 'crash-2');

    const answers = await until(async () => {
      const both = await Promise.all([send(second, key, 'crash-2'), send(third, key, 'crash-2')]);
      return both.some((res) => res.status !== 409) ? both : undefined;
    });
    const fresh = answers.filter((res) => res.status === 200 && !res.replayed);
    expect(fresh).toEqual([{ status: 200, replayed: false, body: { reply: 'reply to: Hallo' } }]);
    const other = answers.find((res) => res !== fresh[0]);
    expect(other?.status === 409 || other?.replayed).toBe(true);
    expect(await usedOf(second.url, key)).toBe(1);
    expect((await upstream.received()).requests).toHaveLength(2);
  });

  it('refunds the unit when no retry comes: the sweep of the next server gives it back once the lease ran out', async () => {
    const { key } = await createKeyWithCli(env);
    await killedMidCore(key, 'crash-3');
    const [claim] = await claims();
    expect(claim?.unit_month).not.toBeNull();
    await until(async () => (Date.now() > Number(claim?.expires_at) ? true : undefined));

    const second = await serve();
    await until(async () => ((await usedOf(second.url, key)) === 0 ? true : undefined));
    expect(await claims()).toEqual([]);
    // The retry comes after all: it runs afresh and is counted once.
    const retry = await send(second, key, 'crash-3');
    expect(retry).toEqual({ status: 200, replayed: false, body: { reply: 'reply to: Hallo' } });
    expect(await usedOf(second.url, key)).toBe(1);
  });
});

interface ClaimRow {
  readonly expires_at: number | string;
  readonly unit_month: string | null;
}

/** The running claims in the database. */
async function claims(): Promise<ClaimRow[]> {
  const query = 'select expires_at, unit_month from idempotency_keys where outcome is null';
  if (TEST_DIALECT === 'sqlite') {
    const db = new Database(database.file, { readonly: true, fileMustExist: true });
    try {
      return db.prepare(query).all() as ClaimRow[];
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: database.env.PLAUDER_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query<ClaimRow>(query)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Waits until the killed server's PostgreSQL sessions are gone, while no other server
 * runs: a statement it had sent (a lease renewal) may still commit after the kill.
 */
async function backendsGone(): Promise<void> {
  const client = new pg.Client({ connectionString: database.env.PLAUDER_DATABASE_URL });
  await client.connect();
  try {
    await until(async () => {
      const { rows } = await client.query<{ others: number }>(
        `select count(*)::int as others from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()`,
      );
      return rows[0]?.others === 0 ? true : undefined;
    });
  } finally {
    await client.end();
  }
}
