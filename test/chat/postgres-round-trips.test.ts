/**
 * Round trips of a turn on PostgreSQL: the session's row is read while the unit is
 * reserved, and both statements go to the database together (one group of named
 * statements, one round trip), so a turn with a sessionId takes two (reserve + read, store
 * the turn) and one without takes one, with the key cached; also when another instance
 * wrote the session since this one held it in memory (the read brings the window only
 * then). Every query the driver sends
 * is counted, BEGIN and COMMIT included; a statement's first run on a connection goes on
 * its own (it is parsed then), so each instance first runs a session's turns once.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { recordingCore } from '../helpers/recording-core.js';
import { TEST_DIALECT } from '../helpers/test-database.js';
import { chat, startTestServer, type TestServer } from '../helpers/test-server.js';

let queries = 0;
const query = pg.Client.prototype.query;
beforeAll(() => {
  pg.Client.prototype.query = function counted(this: pg.Client, ...args: unknown[]) {
    queries++;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
});
afterAll(() => {
  pg.Client.prototype.query = query;
});

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

/**
 * The key cache's real-time clock, held still: an entry is used for at most a second, and
 * on a busy machine a second can pass between warming the cache and the turn measured.
 */
const stillClock = () => 0;

/**
 * Requests without a session until one takes a single round trip: the key cache keeps a
 * key only once its connection listens for key changes, which the first request opens
 * (on a busy machine that takes longer than a request or two).
 */
async function warmKeyCache(server: TestServer, key: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while ((await roundTrips(server, key, { message: 'warm' })) > 1) {
    if (Date.now() > deadline) throw new Error('the key cache never started listening');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // The statements of a session's turns, read whole and then held in memory.
  for (const message of ['warm', 'warm again']) {
    await roundTrips(server, key, { message, sessionId: `warm-${randomUUID()}` });
    await roundTrips(server, key, { message, sessionId: 'warm' });
  }
}

/** The queries one answered request took. */
async function roundTrips(server: TestServer, key: string, body: unknown): Promise<number> {
  const before = queries;
  const res = await chat(server, key, body);
  expect(res.status).toBe(200);
  expect(res.json?.reply).toMatch(/^reply to /);
  return queries - before;
}

describe.skipIf(TEST_DIALECT !== 'postgres')('a turn on PostgreSQL', () => {
  it('takes two round trips with a sessionId and one without, also when another instance wrote the session since', async () => {
    const a = recordingCore();
    const server = await startTestServer({ core: a.core, keyCacheMonotonic: stillClock });
    cleanup.push(() => server.close());
    const { key } = await server.createKey();
    await warmKeyCache(server, key);

    expect(await roundTrips(server, key, { message: 'one', sessionId: 's' })).toBe(2);
    // The window is held in memory now: the read only confirms it is current.
    expect(await roundTrips(server, key, { message: 'two', sessionId: 's' })).toBe(2);
    expect(await roundTrips(server, key, { message: 'no session' })).toBe(1);

    // Another instance holds no copy: the same read brings the window whole.
    const b = recordingCore();
    const other = await startTestServer({
      core: b.core,
      database: server.database,
      keyCacheMonotonic: stillClock,
    });
    cleanup.push(() => other.close());
    await warmKeyCache(other, key);
    expect(await roundTrips(other, key, { message: 'three', sessionId: 's' })).toBe(2);
    expect(b.seen.at(-1)?.history.map((turn) => turn.message)).toEqual(['one', 'two']);

    // And the first instance's copy is no longer current: the same read, which leaves the
    // window out only while the copy is current, brings it.
    expect(await roundTrips(server, key, { message: 'four', sessionId: 's' })).toBe(2);
    expect(a.seen.at(-1)?.history.map((turn) => turn.message)).toEqual(['one', 'two', 'three']);
  });
});
