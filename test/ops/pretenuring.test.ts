import { describe, expect, it, onTestFinished } from 'vitest';
import { startServerProcess } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { chat, startTestServer } from '../helpers/test-server.js';

/**
 * `plauder serve` turns off V8's allocation-site pretenuring before it builds the app
 * (src/server.ts; bench/README.md, "Objects allocated old"). V8 traces every decision it
 * makes with `--trace-pretenuring`; loading the modules makes some, before the flag is
 * set, which shows the trace works in the same process.
 */
describe('allocation-site pretenuring', () => {
  it('is off while the server serves: V8 makes no pretenuring decision under load', async () => {
    const database = await createTestDatabase();
    const setup = await startTestServer({ database, env: { PLAUDER_CORE: 'builtin' } });
    const { key } = await setup.createKey();
    await setup.close();
    onTestFinished(() => database.drop());

    const server = await startServerProcess(setup.env, [
      process.execPath,
      '--trace-pretenuring',
      '--trace-pretenuring-statistics',
      '--trace-gc',
    ]);
    onTestFinished(async () => {
      await server.stop();
    });
    const atStart = server.output();
    // 50 concurrent turns at a time, in sessions: each request survives a few collections.
    for (let round = 0; round < 20; round++) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          chat(server, key, {
            message: 'Wie viele Anfragen habe ich im Monat?',
            sessionId: `s${(round * 50 + i) % 7}`,
          }),
        ),
      );
      expect(replies.every((reply) => reply.status === 200)).toBe(true);
    }
    const whileServing = server.output().slice(atStart.length);

    expect(atStart).toContain('pretenuring: ');
    expect(whileServing).toMatch(/Scavenge/);
    expect(whileServing).not.toContain('pretenuring');
  });
});
