import { afterEach, describe, expect, it } from 'vitest';
import { type CoreAdapter, CoreError } from '../../src/core/core-adapter.js';
import { chat, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer | undefined;
afterEach(() => server?.close());

const SECRET_DETAIL = 'SELECT password FROM internals /srv/plauder/core.ts:42';

async function withCore(core: CoreAdapter, env: Record<string, string> = {}) {
  server = await startTestServer({ core, env });
  const { key, id } = await server.createKey();
  const used = () =>
    (server as TestServer).services.usage.used(
      id,
      (server as TestServer).services.quota.monthOf(Date.now()).month,
    );
  return { key, id, used, url: server.url };
}

describe('when the core fails', () => {
  const failures: Array<[string, CoreAdapter, string]> = [
    [
      'throws an Error',
      { name: 'throws', reply: async () => Promise.reject(new Error(SECRET_DETAIL)) },
      'internal_error',
    ],
    [
      'throws a non-Error',
      { name: 'throws', reply: async () => Promise.reject(SECRET_DETAIL) },
      'internal_error',
    ],
    [
      'reports itself unavailable',
      {
        name: 'down',
        reply: async () => Promise.reject(new CoreError('core_unavailable', SECRET_DETAIL)),
      },
      'core_unavailable',
    ],
    ['returns an empty reply', { name: 'empty', reply: async () => '  ' }, 'core_unavailable'],
  ];

  it.each(failures)(
    'answers 500 when it %s, refunds the reservation and leaks nothing',
    async (_name, core, code) => {
      const { key, id, used, url } = await withCore(core);
      expect((await chat({ url }, key, { message: 'erste', sessionId: 's' })).status).toBe(500);
      const res = await chat({ url }, key, { message: 'Hallo Welt', sessionId: 's' });

      expect(res.status).toBe(500);
      expect(res.json).toEqual({
        error: { code, message: expect.any(String), requestId: res.headers.get('x-request-id') },
      });
      expect(res.text).not.toContain('SELECT');
      expect(res.text).not.toContain('core.ts');
      expect(res.text).not.toMatch(/at \w+ \(/);
      expect(await used()).toBe(0);
      // Nothing is remembered from a failed turn.
      expect(
        await (server as TestServer).services.sessions.read(id, 's', Date.now()),
      ).toBeUndefined();
      const logs = (server as TestServer).logs.join('\n');
      expect(logs).toContain(`"code":"${code}"`);
      expect(logs).not.toContain('Hallo Welt');
      if (code === 'internal_error') expect(logs).not.toContain('SELECT password');
    },
  );

  it('answers 500 core_timeout when the core does not answer within PLAUDER_CORE_TIMEOUT, and aborts it', async () => {
    let aborted = false;
    const hanging: CoreAdapter = {
      name: 'hangs',
      reply: ({ signal }) =>
        new Promise((_, reject) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          });
        }),
    };
    const { key, used, url } = await withCore(hanging, { PLAUDER_CORE_TIMEOUT: '200ms' });
    const started = Date.now();
    const res = await chat({ url }, key, { message: 'Hallo' });
    expect(res.status).toBe(500);
    expect(res.json.error.code).toBe('core_timeout');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(aborted).toBe(true);
    expect(await used()).toBe(0);
  });

  it('recovers: the next request after a failure is answered and counted once', async () => {
    let fail = true;
    const flaky: CoreAdapter = {
      name: 'flaky',
      reply: async () => {
        if (fail) throw new Error('boom');
        return 'wieder da';
      },
    };
    const { key, used, url } = await withCore(flaky);
    expect((await chat({ url }, key, { message: 'a' })).status).toBe(500);
    fail = false;
    const res = await chat({ url }, key, { message: 'b' });
    expect(res.json).toEqual({ reply: 'wieder da' });
    expect(await used()).toBe(1);
  });
});
