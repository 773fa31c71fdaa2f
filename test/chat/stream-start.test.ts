/**
 * When a streamed turn starts its stream (src/chat/take-turn.ts, `TurnStream`): after every
 * decision before the core, once the core has been asked (so that an upstream's request is
 * on its way while the front door writes its head), and before the first piece of the
 * reply. The turn use case itself, on the project's database, with a core that records
 * when it is asked.
 */
import { afterEach, expect, it } from 'vitest';
import { createTakeTurn, type TurnStream } from '../../src/chat/take-turn.js';
import type { CoreAdapter } from '../../src/core/core-adapter.js';
import { Cancellation } from '../../src/util/cancellation.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A streaming core and a `reply()`-only core, each noting in `log` what happens. */
function cores(log: string[]): Record<string, CoreAdapter> {
  return {
    streaming: {
      name: 'streaming',
      reply: async () => 'unused',
      async *stream() {
        log.push('core asked');
        yield { type: 'delta', text: 'Hal' };
        yield { type: 'delta', text: 'lo!' };
      },
    },
    reply: {
      name: 'reply',
      reply: async () => {
        log.push('core asked');
        return 'Hallo!';
      },
    },
  };
}

it.each(['streaming', 'reply'])(
  'starts the stream once the %s core was asked, before its first piece',
  async (kind) => {
    server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
    const { id } = await server.createKey();
    const log: string[] = [];
    const core = cores(log)[kind] as CoreAdapter;
    const takeTurn = createTakeTurn(server.services, core);
    const stream: TurnStream = {
      start: (quota) => log.push(`start (used ${quota.used})`),
      delta: (text) => {
        log.push(`delta ${text}`);
      },
    };

    const decision = await takeTurn({
      key: {
        id,
        name: 'test key',
        plan: 'standard',
        limit: 1000,
        minuteLimit: undefined,
        active: true,
      },
      language: 'de',
      request: { ok: true, message: 'Hallo', sessionId: undefined },
      idempotencyKey: undefined,
      fingerprint: { endpoint: '/api/chat', body: '{"message":"Hallo"}' },
      signal: new Cancellation(),
      stream,
    });

    expect(decision).toMatchObject({ kind: 'reply', reply: 'Hallo!' });
    const deltas = kind === 'streaming' ? ['delta Hal', 'delta lo!'] : ['delta Hallo!'];
    expect(log).toEqual(['core asked', 'start (used 1)', ...deltas]);
  },
);

it('starts no stream for a turn refused before the core', async () => {
  server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
  const { id } = await server.createKey();
  const log: string[] = [];
  const takeTurn = createTakeTurn(server.services, cores(log).streaming as CoreAdapter);
  const decision = await takeTurn({
    key: { id, name: 'test key', plan: 'standard', limit: 0, minuteLimit: undefined, active: true },
    language: 'de',
    request: { ok: true, message: 'Hallo', sessionId: undefined },
    idempotencyKey: undefined,
    fingerprint: { endpoint: '/api/chat', body: '{"message":"Hallo"}' },
    signal: new Cancellation(),
    stream: {
      start: () => log.push('start'),
      delta: () => {
        log.push('delta');
      },
    },
  });

  expect(decision.kind).toBe('quota_exceeded');
  expect(log).toEqual([]);
});
