import { afterAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { chat, startTestServer, type TestServer } from '../helpers/test-server.js';

const REQUESTS = 1200;
const LIMIT = 1000;

interface Tally {
  replies: number;
  quotaExceeded: number;
  other: string[];
}

/**
 * Requests in flight at once: far more than the database pool, so they race for the quota,
 * but not 1 200 sockets opened in one instant from the test's own process (on a machine
 * with a load average of 14 some of those were reset before they were read: that tests the
 * machine, not the quota).
 */
const IN_FLIGHT = 300;

async function fire(urls: string[], key: string): Promise<Tally> {
  const tally: Tally = { replies: 0, quotaExceeded: 0, other: [] };
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (let i = next++; i < REQUESTS; i = next++) await send(i);
    }),
  );
  return tally;

  async function send(i: number) {
    const res = await chat({ url: urls[i % urls.length] as string }, key, {
      message: `Frage ${i}`,
    });
    if (res.status === 200 && typeof res.json?.reply === 'string' && res.json.error === undefined)
      tally.replies++;
    else if (res.status === 429 && res.json?.error?.code === 'quota_exceeded')
      tally.quotaExceeded++;
    else tally.other.push(`${res.status} ${res.text.slice(0, 100)}`);
  }
}

describe('the monthly quota under concurrency', () => {
  const servers: TestServer[] = [];
  const processes: ServerProcess[] = [];
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await Promise.all(servers.map((s) => s.close()));
    await Promise.all(databases.map((d) => d.drop()));
  });

  it('gives exactly 1000 replies and 200 × 429 for 1200 concurrent requests on one process', async () => {
    const server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
    servers.push(server);
    const { id, key } = await server.createKey({ plan: 'standard' });

    const tally = await fire([server.url], key);

    expect(tally.other).toEqual([]);
    expect(tally.replies).toBe(LIMIT);
    expect(tally.quotaExceeded).toBe(REQUESTS - LIMIT);
    expect(
      await server.services.usage.used(id, server.services.quota.monthOf(Date.now()).month),
    ).toBe(LIMIT);
  });

  it('gives exactly 1000 replies and 200 × 429 across two processes on one database', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    // The first server creates and migrates the database; the key is made through it.
    const owner = await startTestServer({ database, env: { PLAUDER_CORE: 'placeholder' } });
    servers.push(owner);
    const { id, key } = await owner.createKey({ plan: 'standard' });
    const env = owner.env;
    const [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    processes.push(a as ServerProcess, b as ServerProcess);

    const tally = await fire([(a as ServerProcess).url, (b as ServerProcess).url], key);

    expect(tally.other).toEqual([]);
    expect(tally.replies).toBe(LIMIT);
    expect(tally.quotaExceeded).toBe(REQUESTS - LIMIT);
    expect(
      await owner.services.usage.used(id, owner.services.quota.monthOf(Date.now()).month),
    ).toBe(LIMIT);
  });
});
