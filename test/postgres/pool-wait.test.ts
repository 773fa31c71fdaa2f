/**
 * A slow machine may make answers slower, never wrong: a request that waits longer than the
 * connect timeout (5 s) for a free pooled connection is answered once one is free, not with
 * a 500 (pg-pool applies `connectionTimeoutMillis` to that wait too; plauder gives it only
 * to the connection attempt itself).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chat, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer | undefined;
afterEach(() => server?.close());

describe('a request queued behind a busy PostgreSQL pool', () => {
  it('is answered once a connection is free, even after more than the connect timeout', async () => {
    server = await startTestServer({
      env: { PLAUDER_DATABASE_POOL_SIZE: '1', PLAUDER_CORE: 'placeholder' },
    });
    const { key, id } = await server.createKey();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The pool's only connection is busy for longer than the 5 s connect timeout.
    const holding = server.services.store.db.transaction().execute(async () => held);
    const started = Date.now();
    const answer = chat(server, key, { message: 'Hallo' });
    setTimeout(release, 6_000);
    const res = await answer;
    await holding;
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_900);
    expect(res.status).toBe(200);
    const month = server.services.quota.monthOf(Date.now()).month;
    expect(await server.services.usage.used(id, month)).toBe(1);
  });
});
