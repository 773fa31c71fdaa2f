import { describe, expect } from 'vitest';
import type { Upstream } from '../core/openai/upstream-process.js';
import { test as base, openAiEnv } from '../helpers/fixtures.js';
import { postStream, type SseAnswer, until } from '../helpers/sse.js';
import { http, startTestServer, type TestServer } from '../helpers/test-server.js';
import { callTool, connectMcp, textOf } from '../mcp/mcp-client.js';

// One key holding its maximum of slow streams (a real upstream process holds each after its
// first token) cannot start another, and cannot slow another key down.
const MAX = 3;

/** One server for the file, in front of the worker's upstream (each test asks for `upstream`). */
const test = base.extend(
  'server',
  { scope: 'file' },
  async ({ upstreamProcess }, { onCleanup }) => {
    const server = await startTestServer({
      env: openAiEnv(
        upstreamProcess,
        {
          PLAUDER_KEY_CONCURRENCY: String(MAX),
          PLAUDER_PLANS: 'standard=1000,solo=1000+1/concurrent',
        },
        { retries: 'shipped' },
      ),
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

describe('concurrent turns per key', () => {
  test("one key's maximum of slow streams: another key starts at once, one more of the first is refused 429 until one ends", async ({
    server,
    upstream,
  }) => {
    const a = await server.createKey();
    const b = await server.createKey({ name: 'other' });
    const held = await holdStreams(server, upstream, a.key, MAX);

    // Another key's streamed turn gets its first delta while the first key's are still held.
    const other = heldStream(server, b.key, 'Hallo');
    await other.started;
    const otherAnswer = await other.answer;
    expect(otherAnswer.status).toBe(200);
    expect((await upstream.received()).requests).toHaveLength(MAX + 1);

    // One more of the first key: 429 at once, on every door, not counted, nothing kept.
    const before = await usedOf(server, a.id);
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
    expect((await upstream.received()).requests).toHaveLength(MAX + 1);
    const metrics = await http(`${server.url}/metrics`);
    expect(metrics.text).toMatch(/plauder_chat_outcomes_total\{[^}]*outcome="too_many_concurrent"/);

    // One ends: the key can start a new one, and the refused Idempotency-Key runs afresh.
    await upstream.release();
    const ended = held[0];
    expect((await ended?.answer)?.status).toBe(200);
    const again = await http(`${server.url}/api/chat`, {
      key: a.key,
      headers: { 'idempotency-key': 'k-1' },
      body: { message: 'noch eins' },
    });
    expect(again.status).toBe(200);
    expect(again.json.reply).toBe('reply to: noch eins');
    expect(again.headers.get('idempotent-replayed')).toBeNull();

    await releaseAll(upstream, held.slice(1));
    expect(await usedOf(server, a.id)).toBe(before + 1);
  });

  test('a plan sets its own cap; a hang-up gives its place back', async ({ server, upstream }) => {
    const a = await server.createKey({ plan: 'solo' });
    const controller = new AbortController();
    await upstream.script({ stream: { pieces: ['eins ', 'zwei'], holdAfter: 1 } });
    let first: () => void = () => {};
    const started = new Promise<void>((resolve) => {
      first = resolve;
    });
    const gone = postStream(`${server.url}/api/chat`, {
      key: a.key,
      body: { message: 'lang' },
      signal: controller.signal,
      onEvent: () => first(),
    }).catch(() => undefined);
    await started;
    const refused = await http(`${server.url}/api/chat`, { key: a.key, body: { message: 'x' } });
    expect(refused.json.error.code).toBe('too_many_concurrent');

    controller.abort();
    await gone;
    await until(async () => {
      const res = await http(`${server.url}/api/chat`, { key: a.key, body: { message: 'y' } });
      return res.status === 200 ? res : undefined;
    }, 'the place is free again');
    await upstream.release();
  });
});
