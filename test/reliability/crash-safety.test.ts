/**
 * Crash safety on SQLite: a real server process under load from 50 concurrent clients on
 * one Standard key is killed with SIGKILL at several points; the file stays intact and the
 * stored count stays between what the clients got and what they had in flight.
 * (The same harness takes a PostgreSQL target: another env and another `inspect`.)
 */
import Database from 'better-sqlite3';
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

// SQLite only: in the PostgreSQL project this is where a PostgreSQL target (its env and an
// `inspect` reading the count over a connection) plugs into the same harness.
describe.runIf(TEST_DIALECT === 'sqlite')('crash safety (SQLite)', () => {
  let database: TestDatabase | undefined;
  afterAll(() => database?.drop());

  it('keeps the file intact and the count between replies and replies + in-flight over four SIGKILLs', async () => {
    database = await createTestDatabase('sqlite');
    const target = sqliteTarget(database);
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
