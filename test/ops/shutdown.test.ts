import net from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { CoreAdapter } from '../../src/core/core-adapter.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { startServerProcess } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { chat, startTestServer } from '../helpers/test-server.js';

describe('graceful shutdown', () => {
  it('lets in-flight requests finish and counts each exactly once', async () => {
    let started = 0;
    const slow: CoreAdapter = {
      name: 'slow',
      reply: async () => {
        started++;
        await new Promise((resolve) => setTimeout(resolve, 400));
        return 'fertig';
      },
    };
    const server = await startTestServer({ core: slow });
    const { key, id } = await server.createKey();
    const month = server.services.quota.monthOf(Date.now()).month;

    const inFlight = Array.from({ length: 20 }, (_, i) => chat(server, key, { message: `m${i}` }));
    while (started < 20) await new Promise((resolve) => setTimeout(resolve, 10));
    const closing = server.app.close();
    const results = await Promise.all(inFlight);
    await closing;

    expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(results.every((r) => r.json.reply === 'fertig')).toBe(true);
    await expect(chat(server, key, { message: 'too late' })).rejects.toThrow();
    expect(await server.services.usage.used(id, month)).toBe(20);
    await server.services.store.close();
    await server.database.drop();
  });

  it("does not wait for a connection that never carried a request (a client's spare)", async () => {
    const server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
    const { port } = new URL(server.url);
    const spare = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => spare.once('connect', resolve));
    const closedByServer = new Promise((resolve) => spare.once('close', resolve));
    // Node's own close() would wait for this socket's header timeout (60 s).
    await server.app.close();
    await closedByServer;
    expect(spare.destroyed).toBe(true);
    await server.services.store.close();
    await server.database.drop();
  });

  it('exits with code 0 on SIGTERM and SIGINT, and the next process sees every count', async () => {
    const database = await createTestDatabase();
    const server = await startTestServer({ database, env: { PLAUDER_CORE: 'placeholder' } });
    const { key } = await server.createKey();
    await server.close();
    onTestFinished(() => database.drop());
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const proc = await startServerProcess(server.env);
      const replies = await Promise.all(
        Array.from({ length: 25 }, () => chat(proc, key, { message: 'x' })),
      );
      expect(replies.every((r) => r.status === 200)).toBe(true);
      expect(await proc.stop(signal)).toBe(0);
      expect(proc.output()).toContain('"msg":"shut down"');
    }
    const usage = await runCliInProcess(['usage', '--json'], server.env);
    expect(JSON.parse(usage.stdout).total).toBe(50);
  });
});
