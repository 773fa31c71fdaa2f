/**
 * PostgreSQL going away under a running server: readiness says so, chat requests fail
 * closed (500, nothing counted), and when the database is back the server recovers by
 * itself. Runs against a private PostgreSQL server that the test stops and starts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreAdapter } from '../../src/core/core-adapter.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';

let postgres: PrivatePostgres;
const databases: TestDatabase[] = [];
const servers: TestServer[] = [];

beforeAll(async () => {
  postgres = await startPrivatePostgres();
});
afterAll(async () => {
  await postgres.start().catch(() => {});
  for (const server of servers) await server.close();
  for (const database of databases) await database.drop().catch(() => {});
  await postgres.destroy();
});

async function serverOnPrivatePostgres(core?: CoreAdapter): Promise<TestServer> {
  const database = await createTestDatabase('postgres', postgres.url);
  databases.push(database);
  const server = await startTestServer({
    database,
    ...(core ? { core } : { env: { PLAUDER_CORE: 'placeholder' } }),
  });
  servers.push(server);
  return server;
}

async function until(check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return Date.now() - started;
}

describe('while PostgreSQL is down', () => {
  it('answers /readyz 503 and chat 500 internal_error, counts nothing, and recovers without a restart', async () => {
    const server = await serverOnPrivatePostgres();
    const { id, key } = await server.createKey();
    const month = server.services.quota.monthOf(Date.now()).month;
    for (let i = 0; i < 3; i++)
      expect((await chat(server, key, { message: 'vorher' })).status).toBe(200);

    await postgres.stop('fast');
    const startedAt = Date.now();
    const ready = await http(`${server.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.json.error.code).toBe('service_unavailable');
    expect(Date.now() - startedAt).toBeLessThan(3000);
    expect((await http(`${server.url}/healthz`)).status).toBe(200);

    const during = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        chat(
          server,
          key,
          { message: `während ${i}`, sessionId: 's1' },
          i % 2 ? '/api/chat-en' : '/api/chat',
        ),
      ),
    );
    for (const res of during) {
      expect(res.status).toBe(500);
      expect(res.json.error.code).toBe('internal_error');
      expect(res.text).not.toMatch(/ECONNREFUSED|postgres|stack|terminat/i);
    }
    const usage = await http(`${server.url}/api/usage`, { key });
    expect(usage.status).toBe(500);

    await postgres.start();
    const recoveredIn = await until(
      async () => (await http(`${server.url}/readyz`)).status === 200,
      10_000,
    );
    console.log(`[outage] /readyz back to 200 ${recoveredIn} ms after PostgreSQL started`);
    const after = await chat(server, key, { message: 'nachher', sessionId: 's1' });
    expect(after.status).toBe(200);
    expect(await server.services.usage.used(id, month)).toBe(4);
    const stored = await http(`${server.url}/api/sessions/s1`, { key });
    expect(stored.json.turns.map((t: { message: string }) => t.message)).toEqual(['nachher']);
  });

  it('refunds a request whose reply could not be stored, once the database is back', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered = 0;
    const gated: CoreAdapter = {
      name: 'gated',
      reply: async () => {
        entered++;
        await gate;
        return 'zu spät';
      },
    };
    const server = await serverOnPrivatePostgres(gated);
    const { id, key } = await server.createKey();
    const month = server.services.quota.monthOf(Date.now()).month;

    // Admitted and counted while the database is up...
    const inFlight = chat(server, key, { message: 'bleib dran', sessionId: 'lost' });
    await until(async () => entered === 1, 5000);
    expect(await server.services.usage.used(id, month)).toBe(1);
    // ...then the database goes away before the turn can be stored.
    await postgres.stop('fast');
    release();
    const res = await inFlight;
    expect(res.status).toBe(500);
    expect(res.json.error.code).toBe('internal_error');
    expect(server.services.quota.pendingRefunds()).toBe(1);
    const metrics = await http(`${server.url}/metrics`);
    expect(metrics.text).toMatch(/^plauder_quota_refunds_pending 1$/m);

    await postgres.start();
    const refundedIn = await until(
      async () => server.services.quota.pendingRefunds() === 0,
      15_000,
    );
    console.log(`[outage] pending refund written ${refundedIn} ms after PostgreSQL started`);
    expect(await server.services.usage.used(id, month)).toBe(0);
    expect((await http(`${server.url}/metrics`)).text).toMatch(
      /^plauder_quota_refunds_pending 0$/m,
    );
  });
});
