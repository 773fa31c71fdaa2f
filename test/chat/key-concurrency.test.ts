import { describe, expect } from 'vitest';
import type { Upstream } from '../core/openai/upstream-process.js';
import { test as base, openAiEnv } from '../helpers/fixtures.js';
import { postStream, type SseAnswer, until } from '../helpers/sse.js';
import { http, startTestServer, type TestServer } from '../helpers/test-server.js';
import { callTool, connectMcp, textOf } from '../mcp/mcp-client.js';

// A key's turns beyond its places wait for one (docs/contract.md, "Burst limits"). The
// plans give small caps so that a few held streams (a real upstream process holds each after
// its first token) fill a key's places and its line: `solo` runs one turn and lets one
// wait, `single` runs one, `one` has one reply a month.
const PLANS =
  'standard=1000,solo=1000+1/concurrent+1/queue,single=1000+1/concurrent,one=1+1/concurrent';

/** One server for the file, in front of the worker's upstream (each test asks for `upstream`). */
const test = base.extend(
  'server',
  { scope: 'file' },
  async ({ upstreamProcess }, { onCleanup }) => {
    const server = await startTestServer({
      env: openAiEnv(upstreamProcess, { PLAUDER_PLANS: PLANS }, { retries: 'shipped' }),
    });
    onCleanup(() => server.close());
    return server;
  },
);

const usedOf = (server: TestServer, keyId: string) =>
  server.services.usage.used(keyId, server.services.quota.monthOf(Date.now()).month);

/** A streamed /api/chat turn that is under way once its first delta arrived. */
function heldStream(server: TestServer, key: string, message: string) {
  let first: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    first = resolve;
  });
  const answer = postStream(`${server.url}/api/chat`, {
    key,
    body: { message },
    onEvent: (event) => {
      if (event.event === 'delta') first();
    },
  });
  return { started, answer };
}

async function holdStreams(server: TestServer, upstream: Upstream, key: string, count: number) {
  await upstream.script(
    ...Array.from({ length: count }, () => ({
      stream: { pieces: ['eins ', 'zwei'], holdAfter: 1 },
    })),
  );
  const streams = Array.from({ length: count }, (_, i) => heldStream(server, key, `lang ${i}`));
  await Promise.all(streams.map((s) => s.started));
  return streams;
}

async function releaseAll(
  upstream: Upstream,
  streams: ReadonlyArray<{ answer: Promise<SseAnswer> }>,
) {
  for (const _ of streams) await upstream.release();
  await Promise.all(streams.map((s) => s.answer));
}

/** How many chat requests the upstream has received since the test's reset. */
const upstreamCalls = async (upstream: Upstream) => (await upstream.received()).requests.length;

/** How many turns wait for a place, as /metrics counts them once they got one. */
async function waitedTurns(server: TestServer): Promise<number> {
  const metrics = await http(`${server.url}/metrics`);
  const count = /^plauder_turn_wait_seconds_count (\d+)/m.exec(metrics.text);
  return Number(count?.[1] ?? 0);
}

describe('fair share per key: a turn beyond its places waits', () => {
  test('on the shipped cap of 16, a key running 16 streams has its 17th wait, untouched, and answered when one ends; another key runs at once', async ({
    server,
    upstream,
  }) => {
    const a = await server.createKey();
    const b = await server.createKey({ name: 'other' });
    const held = await holdStreams(server, upstream, a.key, 16);
    const before = await usedOf(server, a.id);

    const waiting = http(`${server.url}/api/chat`, { key: a.key, body: { message: 'noch eins' } });
    await until(async () => ((await waitersOf(server)) === 1 ? true : undefined), 'it waits');
    // Another key's turn runs while the first key's 17th waits.
    const other = await http(`${server.url}/api/chat`, { key: b.key, body: { message: 'Hallo' } });
    expect(other.status).toBe(200);
    // Nothing was reserved for the waiting turn and its core was not asked.
    expect(await usedOf(server, a.id)).toBe(before);
    expect(await upstreamCalls(upstream)).toBe(17);

    await upstream.release();
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.json.reply).toBe('reply to: noch eins');
    await releaseAll(upstream, held.slice(1));
    expect(await usedOf(server, a.id)).toBe(before + 1);
    expect(await waitedTurns(server)).toBeGreaterThanOrEqual(1);
    const line = server.logs
      .map((text) => JSON.parse(text))
      .find((entry) => entry.msg === 'request' && entry.waitMs !== undefined);
    expect(line).toMatchObject({ route: '/api/chat', outcome: 'reply' });
    expect(line.waitMs).toBeGreaterThan(0);
  });

  test('past its line a key is refused 429 too_many_concurrent at once, on every door, not counted', async ({
    server,
    upstream,
  }) => {
    const a = await server.createKey({ plan: 'solo' });
    const held = await holdStreams(server, upstream, a.key, 1);
    const before = await usedOf(server, a.id);
    const inLine = http(`${server.url}/api/chat`, { key: a.key, body: { message: 'wartet' } });
    await until(async () => ((await waitersOf(server)) === 1 ? true : undefined), 'one waits');

    const refused = await http(`${server.url}/api/chat`, {
      key: a.key,
      headers: { 'idempotency-key': 'k-1' },
      body: { message: 'noch eins' },
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.json.error.code).toBe('too_many_concurrent');

    const streamed = await postStream(`${server.url}/api/chat`, {
      key: a.key,
      body: { message: 'noch eins' },
    });
    expect(streamed.status).toBe(429);
    expect(streamed.json.error.code).toBe('too_many_concurrent');

    const v1 = await http(`${server.url}/v1/chat/completions`, {
      key: a.key,
      body: { model: 'plauder-de', messages: [{ role: 'user', content: 'noch eins' }] },
    });
    expect(v1.status).toBe(429);
    expect(v1.headers.get('retry-after')).toBe('1');
    expect(v1.headers.get('x-should-retry')).not.toBe('false');
    expect(v1.json.error).toMatchObject({ code: 'too_many_concurrent', type: 'rate_limit_error' });

    const mcp = await connectMcp(server, a.key);
    const tool = await callTool(mcp, 'chat', { message: 'noch eins' });
    expect(tool.isError).toBe(true);
    expect(textOf(tool)).toMatch(/^Refused \(too_many_concurrent\): .*Retry in a second/);
    await mcp.close();

    expect(await usedOf(server, a.id)).toBe(before);
    expect(await upstreamCalls(upstream)).toBe(1);

    // The held stream ends: the waiting turn runs, and the refused Idempotency-Key runs afresh.
    await upstream.release();
    expect((await held[0]?.answer)?.status).toBe(200);
    expect((await inLine).status).toBe(200);
    const again = await http(`${server.url}/api/chat`, {
      key: a.key,
      headers: { 'idempotency-key': 'k-1' },
      body: { message: 'noch eins' },
    });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(await usedOf(server, a.id)).toBe(before + 2);
  });

  test('a waiting client that leaves is dropped at once and costs nothing; a hang-up gives its place back', async ({
    server,
    upstream,
  }) => {
    const a = await server.createKey({ plan: 'solo' });
    const held = await holdStreams(server, upstream, a.key, 1);
    const before = await usedOf(server, a.id);
    const client = new AbortController();
    const leaving = fetch(`${server.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'geht gleich' }),
      signal: client.signal,
    }).catch(() => undefined);
    await until(async () => ((await waitersOf(server)) === 1 ? true : undefined), 'one waits');
    client.abort();
    await leaving;
    // Its place in line is free again: another turn may wait there.
    await until(async () => ((await waitersOf(server)) === 0 ? true : undefined), 'dropped');
    const next = http(`${server.url}/api/chat`, { key: a.key, body: { message: 'danach' } });
    await until(async () => ((await waitersOf(server)) === 1 ? true : undefined), 'next waits');

    await upstream.release();
    await held[0]?.answer;
    expect((await next).status).toBe(200);
    // The turn that left never reached the upstream and was not counted.
    const messages = (await upstream.received()).requests.map((r) => JSON.stringify(r.body));
    expect(messages.some((body) => body.includes('geht gleich'))).toBe(false);
    expect(await usedOf(server, a.id)).toBe(before + 1);
  });

  test('a soft error is answered at once, without waiting for a place (row 5 before row 8a)', async ({
    server,
    upstream,
  }) => {
    const a = await server.createKey({ plan: 'single' });
    const held = await holdStreams(server, upstream, a.key, 1);
    const soft = await http(`${server.url}/api/chat`, { key: a.key, body: { message: '  ' } });
    expect(soft.status).toBe(200);
    expect(soft.json.error.code).toBe('message_missing');
    expect(await waitersOf(server)).toBe(0);
    await releaseAll(upstream, held);
  });

  test('a used-up month is refused at once, without waiting for a place', async ({
    server,
    upstream,
  }) => {
    const a = await server.createKey({ plan: 'one' });
    const held = await holdStreams(server, upstream, a.key, 1);
    const refused = await http(`${server.url}/api/chat`, { key: a.key, body: { message: 'x' } });
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('quota_exceeded');
    await releaseAll(upstream, held);
  });
});

describe('fair share per key: how long a turn waits', () => {
  test('a turn that waits longer than PLAUDER_KEY_QUEUE_TIMEOUT (set short to see it) gets 429 too_many_concurrent, not counted', async ({
    serve,
    upstream,
  }) => {
    const server = await serve({
      env: openAiEnv(upstream, { PLAUDER_PLANS: PLANS, PLAUDER_KEY_QUEUE_TIMEOUT: '200ms' }),
    });
    const a = await server.createKey({ plan: 'single' });
    const held = await holdStreams(server, upstream, a.key, 1);
    const before = await usedOf(server, a.id);
    const refused = await http(`${server.url}/api/chat`, { key: a.key, body: { message: 'x' } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.json.error.code).toBe('too_many_concurrent');
    expect(await usedOf(server, a.id)).toBe(before);
    expect(await upstreamCalls(upstream)).toBe(1);
    await releaseAll(upstream, held);
  });
});

/** Turns waiting for a place on `server` now (the gauge of /metrics). */
async function waitersOf(server: TestServer): Promise<number> {
  const metrics = await http(`${server.url}/metrics`);
  const gauge = /^plauder_turns_waiting (\d+)/m.exec(metrics.text);
  return Number(gauge?.[1] ?? 0);
}
