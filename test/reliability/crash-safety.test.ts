/**
 * Crash safety: a real server process under load from 50 concurrent clients on one
 * Standard key is killed with SIGKILL at several points; the database stays intact and
 * the stored count stays between what the clients got and what they had in flight.
 * SQLite: `PRAGMA integrity_check` on the file the killed process left behind.
 * PostgreSQL: amcheck's B-tree checks (heap included) on every index of plauder's tables.
 */
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from '../helpers/test-database.js';
import { type CrashTarget, crashUnderLoad, type StorageState } from './support/crash-under-load.js';

function sqliteTarget(database: TestDatabase): CrashTarget {
  const file = database.file;
  return {
    name: 'sqlite',
    env: { ...database.env, PLAUDER_CORE: 'placeholder' },
    async inspect(keyId, month): Promise<StorageState> {
      // Read-only, with the -wal and -shm files the killed process left behind.
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        const integrity = (db.pragma('integrity_check', { simple: true }) as string) ?? '';
        const row = db
          .prepare('select used from usage where key_id = ? and month = ?')
          .get(keyId, month) as { used: number } | undefined;
        return { integrity, used: row?.used ?? 0 };
      } finally {
        db.close();
      }
    },
  };
}

function postgresTarget(database: TestDatabase): CrashTarget {
  return {
    name: 'postgres',
    env: { ...database.env, PLAUDER_CORE: 'placeholder' },
    async inspect(keyId, month): Promise<StorageState> {
      const client = new pg.Client({ connectionString: database.env.PLAUDER_DATABASE_URL });
      await client.connect();
      try {
        await backendsGone(client);
        await client.query('create extension if not exists amcheck');
        const indexes = await client.query<{ name: string }>(
          `select c.relname as name from pg_index i
             join pg_class c on c.oid = i.indexrelid
             join pg_class t on t.oid = i.indrelid
             join pg_namespace n on n.oid = t.relnamespace
            where n.nspname = 'public' and c.relam = (select oid from pg_am where amname = 'btree')`,
        );
        const problems: string[] = [];
        for (const { name } of indexes.rows) {
          try {
            // heapallindexed: every heap row must be found in the index as well.
            await client.query('select bt_index_check($1::regclass, true)', [name]);
          } catch (error) {
            problems.push(`${name}: ${(error as Error).message}`);
          }
        }
        if (indexes.rows.length === 0) problems.push('no indexes found to check');
        const row = await client.query<{ used: number }>(
          'select used from usage where key_id = $1 and month = $2',
          [keyId, month],
        );
        return {
          integrity: problems.length === 0 ? 'ok' : problems.join('; '),
          used: row.rows[0]?.used ?? 0,
        };
      } finally {
        await client.end();
      }
    },
  };
}

/**
 * Waits until no other session is connected to the test database. A server killed with
 * SIGKILL leaves its PostgreSQL backends behind: a statement it had sent still runs to its
 * end (and, outside a transaction, commits) before the backend sees the closed socket and
 * exits. Read before that, the count could still grow after the inspection.
 */
async function backendsGone(client: pg.Client): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { rows } = await client.query<{ others: number }>(
      `select count(*)::int as others from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid()`,
    );
    if (rows[0]?.others === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`${rows[0]?.others} sessions of the killed server still connected`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe(`crash safety (${TEST_DIALECT})`, () => {
  let database: TestDatabase | undefined;
  afterAll(() => database?.drop());

  it('keeps the database intact and the count between replies and replies + in-flight over four SIGKILLs', async () => {
    database = await createTestDatabase();
    const target = TEST_DIALECT === 'sqlite' ? sqliteTarget(database) : postgresTarget(database);
    const run = await crashUnderLoad(target, {
      clients: 50,
      // Early, mid-month, near the limit, and while the limit already refuses requests.
      killPoints: [
        { totalReplies: 40 },
        { totalReplies: 300 },
        { totalReplies: 700 },
        { quotaExceeded: 25 },
      ],
    });

    let replies = 0;
    let inFlight = 0;
    for (const [i, round] of run.rounds.entries()) {
      replies += round.replies;
      inFlight += round.inFlightAtKill;
      console.log(
        `[crash ${target.name}] kill ${i + 1} at ${round.killPoint}: ${round.sent} sent in ${round.ms} ms, ` +
          `${round.replies} replies, ${round.quotaExceeded} × 429, ${round.inFlightAtKill} in flight at the kill; ` +
          `stored ${round.storage.used} (integrity ${round.storage.integrity}), ` +
          `usage after restart ${round.usedAfterRestart}; replies so far ${replies}, over-count ${round.storage.used - replies}`,
      );
      expect(round.unexpected).toEqual([]);
      expect(round.inFlightAtKill).toBeGreaterThanOrEqual(0);
      expect(round.storage.integrity).toBe('ok');
      expect(round.storage.used).toBeGreaterThanOrEqual(replies);
      // No double charge: whatever was counted without a reply was in flight at some kill.
      expect(round.storage.used - replies).toBeLessThanOrEqual(inFlight);
      expect(round.storage.used).toBeLessThanOrEqual(run.limit);
      expect(round.usedAfterRestart).toBe(round.storage.used);
    }

    const last = run.rounds.at(-1);
    expect(last?.quotaExceeded).toBeGreaterThanOrEqual(25);
    // The limit held across the crashes: never more replies than the plan allows.
    expect(run.replies).toBeLessThanOrEqual(run.limit);
    expect(run.final.integrity).toBe('ok');
    expect(run.final.lastStatus).toBe(429);
    expect(run.final.used).toBe(run.limit);
    expect(run.final.usedAfterRestart).toBe(run.limit);
    console.log(
      `[crash ${target.name}] total: ${run.replies} replies for a limit of ${run.limit}, ` +
        `${run.inFlight} requests in flight over ${run.rounds.length} kills, final count ${run.final.used}, ` +
        `integrity ${run.final.integrity}`,
    );
  }, 90_000);
});
