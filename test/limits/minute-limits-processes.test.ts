/**
 * The per-minute limit across two `plauder serve` processes sharing one database (the
 * SQLite file, or PostgreSQL in the postgres project): exactly the limit is answered, the
 * rest is refused with rate_limited, and the month counts only the answers. The operator
 * sees the minute in `plauder keys list`. The processes and the CLI run on one fake clock
 * (libfaketime) that the test sets to the start of a minute instead of waiting for one.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { burst, createFakeClock, nextMinute } from './support.js';

const cleanup: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
});

describe('per-minute limits on two processes sharing a database', () => {
  it('answer exactly 60 of 100 concurrent requests within one minute', async () => {
    const database: TestDatabase = await createTestDatabase();
    cleanup.push(() => database.drop());
    const env = { PLAUDER_CORE: 'placeholder', PLAUDER_PLANS: 'burst=1000/month+60/minute' };
    const owner: TestServer = await startTestServer({ database, env });
    cleanup.push(() => owner.close());
    const { id, key } = await owner.createKey({ plan: 'burst' });
    const clock = createFakeClock();
    cleanup.push(async () => clock.remove());
    const onClock = { ...owner.env, ...clock.env };
    const processes: ServerProcess[] = await Promise.all([
      startServerProcess(onClock),
      startServerProcess(onClock),
    ]);
    for (const p of processes) cleanup.push(() => p.stop());
    const urls = processes.map((p) => p.url);

    await clock.set(nextMinute(clock.now()), urls);
    const minute = Math.floor(clock.now() / 60_000);
    const tally = await burst(urls, key, 100, clock.now);

    expect(tally.other).toEqual([]);
    expect(tally.replies).toBe(60);
    expect(tally.rateLimited).toBe(40);
    const month = owner.services.quota.monthOf(clock.now()).month;
    expect(await owner.services.usage.used(id, month)).toBe(60);

    // The CLI on the same clock, still in the burst's minute (59 s after its start).
    const listed = await runCli(['keys', 'list', '--json'], onClock);
    const table = await runCli(['keys', 'list'], onClock);
    if (Math.floor(clock.now() / 60_000) !== minute)
      throw new Error('the CLI ran after the burst minute ended');
    const row = (JSON.parse(listed.stdout) as Array<Record<string, any>>).find((k) => k.id === id);
    expect(row?.used).toBe(60);
    expect(row?.perMinute).toEqual({ limit: 60, used: 60, remaining: 0 });
    expect(table.stdout).toMatch(/THIS MINUTE/);
    expect(table.stdout).toMatch(/60\/1000\s+60\/60/);
  });
});
