/**
 * Streamed replies on /api/chat and /api/chat-en (docs/contract.md, "Streamed replies"), read with a real SSE parser:
 * the events and headers of a stream, every decision before the core answered exactly as
 * without streaming, the error event after a failure (refunded before any delta, counted
 * once after one; nothing stored), pings,
 * counting once at done, idempotent replays as a stream, and a client leaving mid-stream
 * (a real upstream process sees its request aborted).
 */
import { describe, expect } from 'vitest';
import { releaseWhenSeen } from '../core/openai/upstream-process.js';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { createGatedCore } from '../helpers/gated-core.js';
import { postStream, replyOf, type SseAnswer, until } from '../helpers/sse.js';
import { type HttpResult, http, type TestServer } from '../helpers/test-server.js';

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

const RATE_HEADERS = [
  'ratelimit-policy',
  'ratelimit',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];

function expectStreamHeaders(answer: SseAnswer) {
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(answer.headers.get('cache-control')).toBe('no-store');
  expect(answer.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  for (const name of RATE_HEADERS) expect(answer.headers.get(name)).not.toBeNull();
}

describe('a streamed reply', () => {
  test.for<[string, string, Record<string, string>, object]>([
    ['/api/chat', 'Accept: text/event-stream', { accept: 'text/event-stream' }, {}],
    ['/api/chat-en', '"stream": true', { accept: 'application/json' }, { stream: true }],
  ])(
    'on %s with %s: deltas that join to the reply, then done, counted once',
    async ([path, _how, headers, extra], { serve }) => {
      const s = await serve();
      const { id, key } = await s.createKey();
      const message = path === '/api/chat' ? 'Was kostet plauder?' : 'What does plauder cost?';
      const answer = await postStream(`${s.url}${path}`, {
        key,
        headers,
        body: { message, ...extra },
      });

      expectStreamHeaders(answer);
      expect(answer.headers.get('x-ratelimit-remaining')).toBe('999');
      const names = answer.events.map((e) => e.event);
      expect(names.at(-1)).toBe('done');
      expect(names.slice(0, -1).every((name) => name === 'delta')).toBe(true);
      expect(names.length).toBeGreaterThan(2);
      const { joined, done } = replyOf(answer);
      expect(joined).toBe(done);
      const plain = await http(`${s.url}${path}`, { key, body: { message } });
      expect(done).toBe(plain.json.reply);
      expect(await used(s, id)).toBe(2);
      const line = s.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request');
      expect(line).toMatchObject({ route: path, status: 200, outcome: 'reply', keyId: id });
    },
  );

  test('stores the streamed turn in the session, like an unstreamed one', async ({ serve }) => {
    const s = await serve();
    const { id, key } = await s.createKey();
    const answer = await postStream(`${s.url}/api/chat`, {
      key,
      body: { message: 'Ich heiße Ada.', sessionId: 'sse-1' },
    });
    const turns = await s.services.sessions.read(id, 'sse-1', Date.now());
    expect(turns?.map((t) => [t.message, t.reply])).toEqual([
      ['Ich heiße Ada.', replyOf(answer).done],
    ]);
  });
});

describe('decisions before the core answer exactly as without streaming', () => {
  type Case = {
    name: string;
    setup: (
      s: TestServer,
    ) => Promise<{ key: string; body: unknown; headers?: Record<string, string> }>;
  };
  const cases: Case[] = [
    {
      name: '401 without a valid key',
      setup: async () => ({ key: 'plauder_nope', body: { message: 'Hallo' } }),
    },
    {
      name: 'the soft error of an inactive plan',
      setup: async (s) => ({
        key: (await s.createKey({ active: false })).key,
        body: { message: 'Hallo' },
      }),
    },
    {
      name: 'the soft error of a missing message',
      setup: async (s) => ({ key: (await s.createKey()).key, body: { sessionId: 'x' } }),
    },
    {
      name: 'the soft error of an invalid sessionId',
      setup: async (s) => ({
        key: (await s.createKey()).key,
        body: { message: 'Hallo', sessionId: '../' },
      }),
    },
    {
      name: '429 when the month is used up',
      setup: async (s) => {
        const { key } = await s.createKey({ plan: 'tiny' });
        await http(`${s.url}/api/chat`, { key, body: { message: 'eins' } });
        return { key, body: { message: 'zwei' } };
      },
    },
    {
      name: '400 for an invalid Idempotency-Key',
      setup: async (s) => ({
        key: (await s.createKey()).key,
        body: { message: 'Hallo' },
        headers: { 'idempotency-key': '' },
      }),
    },
  ];

  test.for(cases)('$name', async ({ setup }, { serve }) => {
    const s = await serve({ env: { PLAUDER_PLANS: 'standard=1000,tiny=1' } });
    const { key, body, headers = {} } = await setup(s);
    const plain = await http(`${s.url}/api/chat`, { key, body, headers });
    const streamed = await postStream(`${s.url}/api/chat`, {
      key,
      body: { ...(body as object), stream: true },
      headers,
    });

    expect(streamed.status).toBe(plain.status);
    expect(streamed.events).toEqual([]);
    expect(streamed.headers.get('content-type')).toBe(plain.headers.get('content-type'));
    const withoutId = (res: { json: any }) => {
      const copy = structuredClone(res.json);
      if (copy?.error?.requestId) copy.error.requestId = '<id>';
      return copy;
    };
    expect(withoutId(streamed)).toEqual(withoutId(plain));
    for (const name of [...RATE_HEADERS, 'retry-after', 'www-authenticate', 'cache-control']) {
      const same = (res: HttpResult | SseAnswer) =>
        name === 'ratelimit' || name === 'retry-after'
          ? res.headers.get(name) !== null
          : res.headers.get(name);
      expect(same(streamed), name).toEqual(same(plain));
    }
  });
});

describe('when the core fails after the stream began', () => {
  test('ends with an error event, refunds and stores nothing', async ({ serve }) => {
    const core = createGatedCore();
    const s = await serve({ core });
    const { id, key } = await s.createKey();
    const answering = postStream(`${s.url}/api/chat`, {
      key,
      body: { message: 'Hallo', sessionId: 'fails' },
    });
    await core.waitForCalls(1);
    core.calls[0]?.fail();
    const answer = await answering;

    expectStreamHeaders(answer);
    const last = answer.events.at(-1);
    expect(last?.event).toBe('error');
    expect(JSON.parse(last?.data ?? '')).toEqual({
      error: {
        code: 'core_unavailable',
        message: expect.any(String),
        requestId: answer.headers.get('x-request-id'),
      },
    });
    expect(answer.events.filter((e) => e.event === 'done')).toEqual([]);
    expect(await used(s, id)).toBe(0);
    expect(await s.services.sessions.read(id, 'fails', Date.now())).toBeUndefined();
  });

  test('an upstream that breaks off mid-stream: the deltas so far, then error; counted once', async ({
    serve,
    upstream: up,
  }) => {
    await up.script({ stream: { pieces: ['Es ', 'war ', 'einmal'], breakAfter: 2 } });
    const s = await serve({ env: openAiEnv(up) });
    const { id, key } = await s.createKey();
    const answer = await postStream(`${s.url}/api/chat`, { key, body: { message: 'Märchen' } });

    expect(answer.events.map((e) => e.event)).toEqual(['delta', 'delta', 'error']);
    expect(replyOf(answer).joined).toBe('Es war');
    expect(JSON.parse(answer.events[2]?.data ?? '').error.code).toBe('core_unavailable');
    // The deltas reached the client: the failure does not make them free.
    expect(await used(s, id)).toBe(1);
  });
});

describe('while the core thinks', () => {
  test('sends a ping comment whenever nothing else was sent for the ping interval', async ({
    serve,
  }) => {
    const core = createGatedCore();
    const s = await serve({ core, app: { streamPingMs: 40 } });
    const { key } = await s.createKey();
    const comments: string[] = [];
    const answering = postStream(`${s.url}/api/chat`, { key, body: { message: 'Hallo' } });
    await core.waitForCalls(1);
    // Hold the core until the client has had time for several pings (measured, not slept).
    const heldSince = performance.now();
    await until(() => (performance.now() - heldSince > 200 ? true : undefined), 'time to pass');
    core.calls[0]?.release('Fertig.');
    const answer = await answering;
    comments.push(...answer.comments);

    expect(comments.filter((c) => c === 'ping').length).toBeGreaterThanOrEqual(2);
    expect(replyOf(answer).done).toBe('Fertig.');
  });
});

describe('with the openai core', () => {
  test("sends the first delta as soon as the upstream's first token arrives", async ({
    serve,
    upstream: up,
  }) => {
    await up.script({ stream: { pieces: ['Eins ', 'zwei ', 'drei ', 'vier'], holdAfter: 1 } });
    const s = await serve({ env: openAiEnv(up) });
    const { key } = await s.createKey();
    // The upstream holds ' zwei' and the rest back until the client has seen 'Eins'.
    const held = releaseWhenSeen(up);
    const answer = await postStream(`${s.url}/api/chat`, {
      key,
      body: { message: 'Zähl' },
      onEvent: (event) => {
        if (event.event === 'delta') held.seen();
      },
    });

    expect(held.seenWhileHeld).toBe(true);
    const deltas = answer.events.filter((e) => e.event === 'delta');
    expect(deltas.map((e) => JSON.parse(e.data).text)).toEqual(['Eins', ' zwei', ' drei', ' vier']);
    const done = answer.events.at(-1);
    expect(done?.event).toBe('done');
    expect(JSON.parse(done?.data ?? '').reply).toBe('Eins zwei drei vier');
  });

  test('cancels the upstream when the client leaves after the first delta: counted once, nothing stored', async ({
    serve,
    upstream: up,
  }) => {
    await up.script({ stream: { pieces: ['Es ', 'war ', 'einmal'], gapMs: 10_000 } });
    const s = await serve({ env: openAiEnv(up) });
    const { id, key } = await s.createKey();
    const controller = new AbortController();
    let hungUpAt = 0;
    const answering = postStream(`${s.url}/api/chat`, {
      key,
      body: { message: 'Märchen', sessionId: 'left' },
      signal: controller.signal,
      onEvent: (event) => {
        if (event.event === 'delta' && hungUpAt === 0) {
          hungUpAt = Date.now();
          controller.abort();
        }
      },
    });
    await expect(answering).rejects.toThrow();
    const abortedAt = await until(
      async () => (await up.received()).requests.at(-1)?.abortedAt,
      'the upstream to see its request aborted',
    );
    expect(abortedAt - hungUpAt).toBeLessThan(1_000);
    const line = await until(
      () => s.logs.find((l) => l.includes('"outcome":"client_closed_after_delivery"')),
      'the client_closed_after_delivery log line',
    );
    expect(JSON.parse(line)).toMatchObject({ route: '/api/chat', status: 499, keyId: id });
    // A later turn of the same key is answered after the first one's bookkeeping ended.
    await http(`${s.url}/api/chat`, { key, body: { message: 'Noch eins' } });
    expect(await used(s, id)).toBe(2);
    expect(await s.services.sessions.read(id, 'left', Date.now())).toBeUndefined();
  });

  test('refunds a client that leaves before any part of the reply reached it', async ({
    serve,
    upstream: up,
  }) => {
    await up.script({ stream: { pieces: ['Es ', 'war'], firstTokenMs: 10_000 } });
    const s = await serve({ env: openAiEnv(up) });
    const { id, key } = await s.createKey();
    const controller = new AbortController();
    const answering = postStream(`${s.url}/api/chat`, {
      key,
      body: { message: 'Märchen', sessionId: 'early' },
      signal: controller.signal,
    });
    await until(
      async () => (await up.received()).requests.length === 1 || undefined,
      'the upstream call',
    );
    controller.abort();
    await expect(answering).rejects.toThrow();
    await until(async () => (await up.received()).requests.at(-1)?.abortedAt, 'the upstream abort');
    await until(async () => ((await used(s, id)) === 0 ? true : undefined), 'the refund');
    expect(await s.services.sessions.read(id, 'early', Date.now())).toBeUndefined();
    const line = await until(
      () => s.logs.find((l) => l.includes('"outcome":"client_closed"')),
      'the client_closed log line',
    );
    expect(JSON.parse(line)).toMatchObject({ route: '/api/chat', status: 499, keyId: id });
  });
});

describe('an idempotent replay', () => {
  test('is a stream of one delta and done when a stream is asked for, JSON otherwise', async ({
    serve,
  }) => {
    const s = await serve();
    const { id, key } = await s.createKey();
    const headers = { 'idempotency-key': 'stream-once' };
    const body = { message: 'Was kann plauder?' };
    const first = await postStream(`${s.url}/api/chat`, { key, headers, body });
    const again = await postStream(`${s.url}/api/chat`, { key, headers, body });
    const plain = await http(`${s.url}/api/chat`, { key, headers, body });

    const reply = replyOf(first).done;
    expectStreamHeaders(again);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.events.map((e) => [e.event, JSON.parse(e.data)])).toEqual([
      ['delta', { text: reply }],
      ['done', { reply }],
    ]);
    expect(plain.headers.get('idempotent-replayed')).toBe('true');
    expect(plain.json).toEqual({ reply });
    expect(await used(s, id)).toBe(1);
  });
});
