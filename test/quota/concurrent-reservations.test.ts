/**
 * Concurrent reservations of one key, each decided by one conditional upsert (on SQLite in
 * one group commit, on PostgreSQL in the order they get the row's lock): whatever the path,
 * every count is handed out once, a limit is never passed, a new minute starts its count
 * afresh, each watched count is recorded once, and the days add up to the month.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type {
  ReserveOutcome,
  ReserveRequest,
} from '../../src/storage/repositories/usage-repository.js';
import { TEST_DIALECT } from '../helpers/test-database.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function usageOf(keys = 1) {
  server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
  const ids: string[] = [];
  for (let i = 0; i < keys; i++) ids.push((await server.createKey()).id);
  return { usage: server.services.usage, ids };
}

type Ask = Partial<ReserveRequest> & { keyId: string };

function request(ask: Ask): ReserveRequest {
  return {
    month: '2026-11',
    day: '2026-11-12',
    limit: 1000,
    minute: 100,
    minuteLimit: undefined,
    watch: [],
    record: () => () => {},
    ...ask,
  };
}

const admittedCounts = (outcomes: readonly ReserveOutcome[]) =>
  outcomes
    .filter((o) => o.admitted)
    .map((o) => o.used)
    .sort((a, b) => a - b);
const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('concurrent reservations of one key', () => {
  it('hand out each count once and refuse everything past the month', async () => {
    const { usage, ids } = await usageOf();
    const keyId = ids[0] as string;
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, () => usage.reserve(request({ keyId, limit: 40 }))),
    );

    expect(admittedCounts(outcomes)).toEqual(range(1, 40));
    const refused = outcomes.filter((o) => !o.admitted);
    expect(refused).toHaveLength(20);
    for (const o of refused) expect(o).toMatchObject({ refusedBy: 'month', used: 40 });
    expect(await usage.used(keyId, '2026-11')).toBe(40);
    expect(await usage.days(keyId, '2026-11-01', '2026-11-30')).toEqual([
      { day: '2026-11-12', used: 40 },
    ]);
  });

  it('stop at the per-minute limit and count the minute of each admitted request', async () => {
    const { usage, ids } = await usageOf();
    const keyId = ids[0] as string;
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, () => usage.reserve(request({ keyId, minuteLimit: 10 }))),
    );

    const admitted = outcomes.filter((o) => o.admitted);
    expect(admitted.map((o) => o.minuteUsed).sort((a, b) => a - b)).toEqual(range(1, 10));
    expect(admittedCounts(outcomes)).toEqual(range(1, 10));
    for (const o of outcomes.filter((o) => !o.admitted)) {
      expect(o).toMatchObject({ refusedBy: 'minute', minuteUsed: 10, used: 10 });
    }
    expect(await usage.row(keyId, '2026-11')).toEqual({
      keyId,
      month: '2026-11',
      used: 10,
      minute: 100,
      minuteUsed: 10,
    });

    // The next minute has room again; the month goes on counting.
    const next = await Promise.all(
      Array.from({ length: 12 }, () =>
        usage.reserve(request({ keyId, minuteLimit: 10, minute: 101 })),
      ),
    );
    expect(admittedCounts(next)).toEqual(range(11, 20));
    expect(await usage.row(keyId, '2026-11')).toMatchObject({
      used: 20,
      minute: 101,
      minuteUsed: 10,
    });
  });

  it('record each watched count exactly once, and only counts that were admitted', async () => {
    const { usage, ids } = await usageOf();
    const keyId = ids[0] as string;
    const recorded: number[] = [];
    const outcomes = await Promise.all(
      Array.from({ length: 15 }, () =>
        usage.reserve(
          request({
            keyId,
            limit: 10,
            watch: [1, 8, 10],
            record: (used) => {
              recorded.push(used);
              return () => {};
            },
          }),
        ),
      ),
    );

    expect(admittedCounts(outcomes)).toEqual(range(1, 10));
    expect(recorded.sort((a, b) => a - b)).toEqual([1, 8, 10]);
  });

  it('keep the counts of different keys and days apart', async () => {
    const { usage, ids } = await usageOf(2);
    const [a, b] = ids as [string, string];
    const days = ['2026-11-12', '2026-11-13'];
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        usage.reserve(
          request({ keyId: i % 2 === 0 ? a : b, day: days[i % 4 < 2 ? 0 : 1], limit: 15 }),
        ),
      ),
    );

    const ofKey = (id: string) => outcomes.filter((_, i) => (i % 2 === 0 ? a : b) === id);
    expect(admittedCounts(ofKey(a))).toEqual(range(1, 15));
    expect(admittedCounts(ofKey(b))).toEqual(range(1, 15));
    for (const id of [a, b]) {
      const stored = await usage.days(id, '2026-11-01', '2026-11-30');
      expect(stored.reduce((n, d) => n + d.used, 0)).toBe(15);
      // Each day holds exactly the admitted requests asked on it.
      const expected = new Map<string, number>();
      outcomes.forEach((o, i) => {
        if ((i % 2 === 0 ? a : b) !== id || !o.admitted) return;
        const day = days[i % 4 < 2 ? 0 : 1] as string;
        expected.set(day, (expected.get(day) ?? 0) + 1);
      });
      expect(stored).toEqual([...expected].sort().map(([day, used]) => ({ day, used })));
    }
  });

  it('count again what a refund gave back', async () => {
    const { usage, ids } = await usageOf();
    const keyId = ids[0] as string;
    await Promise.all(Array.from({ length: 5 }, () => usage.reserve(request({ keyId, limit: 5 }))));
    await usage.refund(keyId, '2026-11', 100, '2026-11-12');
    await usage.refund(keyId, '2026-11', 100, '2026-11-12');

    const again = await Promise.all(
      Array.from({ length: 4 }, () => usage.reserve(request({ keyId, limit: 5 }))),
    );
    expect(admittedCounts(again)).toEqual([4, 5]);
    expect(await usage.used(keyId, '2026-11')).toBe(5);
    expect(await usage.days(keyId, '2026-11-01', '2026-11-30')).toEqual([
      { day: '2026-11-12', used: 5 },
    ]);
  });

  // SQLite commits one group's reservations in the order they came; PostgreSQL in the order
  // its statements get the row's lock, which the test cannot choose. A refused one's counts
  // are read after its statement (here, once the next minute has begun).
  it.runIf(TEST_DIALECT === 'sqlite')(
    'decide in the order they came, a new minute starting its count afresh (SQLite)',
    async () => {
      const { usage, ids } = await usageOf();
      const keyId = ids[0] as string;
      const minutes = [100, 100, 100, 100, 101, 101, 101, 101];
      const outcomes = await Promise.all(
        minutes.map((minute) => usage.reserve(request({ keyId, minute, minuteLimit: 3 }))),
      );

      expect(outcomes).toEqual([
        { admitted: true, used: 1, minuteUsed: 1 },
        { admitted: true, used: 2, minuteUsed: 2 },
        { admitted: true, used: 3, minuteUsed: 3 },
        {
          admitted: false,
          refusedBy: 'minute',
          used: expect.any(Number),
          minuteUsed: expect.any(Number),
        },
        { admitted: true, used: 4, minuteUsed: 1 },
        { admitted: true, used: 5, minuteUsed: 2 },
        { admitted: true, used: 6, minuteUsed: 3 },
        { admitted: false, refusedBy: 'minute', used: 6, minuteUsed: 3 },
      ]);
      expect(await usage.row(keyId, '2026-11')).toMatchObject({
        used: 6,
        minute: 101,
        minuteUsed: 3,
      });
    },
  );
});
