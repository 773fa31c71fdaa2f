/**
 * The per-minute limit across four `plauder serve` instances on one PostgreSQL database,
 * as behind a load balancer: exactly the limit is answered within a minute, and the next
 * clock minute has the limit again. The instances run on one fake clock (libfaketime) that
 * the test moves to the start of a minute, and then of the next one, instead of waiting
 * for the real ones.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { burst, createFakeClock, nextMinute } from '../limits/support.js';

const INSTANCES = 4;
const cleanup: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
});

describe('per-minute limits on four instances sharing PostgreSQL', () => {
  it('answer exactly 60 of 120 concurrent requests within one minute, and 60 again in the next', async () => {
    const database: TestDatabase = await createTestDatabase('postgres');
    cleanup.push(() => database.drop());
    const env = { PLAUDER_CORE: 'placeholder', PLAUDER_PLANS: 'burst=1000/month+60/minute' };
    const owner: TestServer = await startTestServer({ database, env });
    cleanup.push(() => owner.close());
    const { id, key } = await owner.createKey({ plan: 'burst' });
    const clock = createFakeClock();
    cleanup.push(async () => clock.remove());
    const instances: ServerProcess[] = await Promise.all(
      Array.from({ length: INSTANCES }, () => startServerProcess({ ...owner.env, ...clock.env })),
    );
    for (const instance of instances) cleanup.push(() => instance.stop());
    const urls = instances.map((instance) => instance.url);

    // All four at the start of the next clock minute.
    await clock.set(nextMinute(clock.now()), urls);
    const first = await burst(urls, key, 120, clock.now);
    expect(first.other).toEqual([]);
    expect(first.replies).toBe(60);
    expect(first.rateLimited).toBe(60);

    // The next clock minute has its own 60.
    await clock.set(nextMinute(clock.now()), urls);
    const second = await burst(urls, key, 120, clock.now);
    expect(second.other).toEqual([]);
    expect(second.replies).toBe(60);
    expect(second.rateLimited).toBe(60);

    const month = owner.services.quota.monthOf(clock.now()).month;
    expect(await owner.services.usage.used(id, month)).toBe(120);
  }, 150_000);
});
