/**
 * The key cache (src/keys/key-cache.ts): its rules with a controllable clock, and, on the
 * real database of the project (SQLite or PostgreSQL), that a change made by another
 * process is seen at once, and one made behind plauder's back within a second.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createKeyCache } from '../../src/keys/key-cache.js';
import { createStore, type Store } from '../../src/storage/create-database.js';
import type { FoundKey } from '../../src/storage/repositories/keys-repository.js';
import { createKeysRepository } from '../../src/storage/repositories/keys-repository.js';
import { runCli } from '../helpers/processes.js';
import { TEST_DIALECT } from '../helpers/test-database.js';
import { chat, startTestServer, type TestServer } from '../helpers/test-server.js';

const KEY = { id: 'key_a', name: 'a', plan: 'standard', active: true };
const found = (secretExpiresAt: number | null = null): FoundKey => ({ key: KEY, secretExpiresAt });

/** A cache over a counted read, with a hand-moved monotonic clock and change counter. */
function harness(answer: () => FoundKey | undefined = () => found()) {
  const time = { mono: 0, version: 0 };
  const cache = createKeyCache({
    ttlMs: 1000,
    maxEntries: 3,
    monotonic: () => time.mono,
    changes: () => time.version,
  });
  let reads = 0;
  const lookup = (hash = 'h', now = 0) =>
    cache.lookup(hash, now, async () => {
      reads++;
      return answer();
    });
  return { cache, time, lookup, reads: () => reads };
}

describe('the key cache', () => {
  it('reads a key once, then uses it for less than its TTL', async () => {
    const h = harness();
    expect(await h.lookup()).toEqual(KEY);
    h.time.mono = 999;
    expect(await h.lookup()).toEqual(KEY);
    expect(h.reads()).toBe(1);
    h.time.mono = 1000;
    await h.lookup();
    expect(h.reads()).toBe(2);
  });

  it('reads again once another process committed a change', async () => {
    const h = harness();
    await h.lookup();
    h.time.version++;
    await h.lookup();
    await h.lookup();
    expect(h.reads()).toBe(2);
  });

  it('forgets everything on clear(), also what a read in flight then brings', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const h = harness();
    const inFlight = h.cache.lookup('h', 0, async () => {
      await gate;
      return found();
    });
    h.cache.clear();
    release();
    expect(await inFlight).toEqual(KEY);
    await h.lookup();
    expect(h.reads()).toBe(1); // the read in flight was not kept: this one read
  });

  it('never uses a secret past the end of its rotation grace (service clock)', async () => {
    const h = harness(() => found(5000));
    expect(await h.lookup('h', 4999)).toEqual(KEY);
    expect(h.reads()).toBe(1);
    await h.lookup('h', 5000);
    expect(h.reads()).toBe(2);
  });

  it('does not remember unknown keys, and keeps at most maxEntries', async () => {
    let known = false;
    const h = harness(() => (known ? found() : undefined));
    expect(await h.lookup('new')).toBeUndefined();
    known = true;
    expect(await h.lookup('new')).toEqual(KEY);
    for (const hash of ['b', 'c', 'd']) await h.lookup(hash);
    const before = h.reads();
    await h.lookup('new'); // the oldest of four: dropped for the third
    expect(h.reads()).toBe(before + 1);
    await h.lookup('d');
    expect(h.reads()).toBe(before + 1);
  });

  it('with a TTL of 0 reads every time', async () => {
    const cache = createKeyCache({ ttlMs: 0, maxEntries: 10 });
    let reads = 0;
    for (let i = 0; i < 3; i++)
      await cache.lookup('h', 0, async () => {
        reads++;
        return found();
      });
    expect(reads).toBe(3);
  });
});

let server: TestServer | undefined;
let other: Store | undefined;
afterEach(async () => {
  await other?.close();
  other = undefined;
  await server?.close();
  server = undefined;
});

const until = async (check: () => Promise<boolean>, withinMs: number) => {
  const started = performance.now();
  while (!(await check())) {
    if (performance.now() - started > withinMs) return Number.POSITIVE_INFINITY;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return performance.now() - started;
};

describe(`cached keys on ${TEST_DIALECT}`, () => {
  it('see a revocation made by another process (the CLI) within a second, announced at once', async () => {
    server = await startTestServer();
    const { id, key } = await server.createKey();
    for (let i = 0; i < 3; i++)
      expect((await chat(server, key, { message: 'Hallo' })).status).toBe(200);
    expect((await runCli(['keys', 'revoke', id], server.env)).code).toBe(0);
    // On PostgreSQL the change's notification reaches the server on a connection of its
    // own, which a request can overtake on a busy machine: asked again until it is refused.
    const ms = await until(
      async () => (await chat(server as TestServer, key, { message: 'Hallo' })).status === 401,
      1500,
    );
    console.log(`[key cache] a revocation through the CLI was seen after ${Math.round(ms)} ms`);
    expect(ms).toBeLessThan(1000);
  });

  it('see a change made behind plauder’s back (plain SQL on another connection) within a second', async () => {
    server = await startTestServer();
    const { id, key } = await server.createKey();
    expect((await chat(server, key, { message: 'Hallo' })).status).toBe(200);
    other = await createStore(server.config.database);
    await sql`update api_keys set active = 0 where id = ${id}`.execute(other.db);
    const ms = await until(
      async () =>
        (await chat(server as TestServer, key, { message: 'Hallo' })).json.error?.code ===
        'plan_inactive',
      1500,
    );
    console.log(`[key cache] a change by plain SQL was seen after ${Math.round(ms)} ms`);
    expect(ms).toBeLessThan(1200);
  });

  it('a change through another store announces itself: seen without waiting for the TTL', async () => {
    server = await startTestServer();
    const { id, key } = await server.createKey();
    const services = server.services;
    await services.keys.authenticate(`Bearer ${key}`);
    other = await createStore(server.config.database);
    const changed = await createKeysRepository(other.db, other.features).update(
      id,
      { plan: 'plus' },
      Date.now(),
    );
    expect(changed).toBe(true);
    const ms = await until(
      async () => (await services.keys.authenticate(`Bearer ${key}`))?.plan === 'plus',
      1500,
    );
    console.log(`[key cache] an announced change was seen after ${Math.round(ms)} ms`);
    // Well within the TTL: the announcement, not the expiry, made it visible.
    expect(ms).toBeLessThan(500);
  });
});
