/**
 * Several upstreams behind the real server (docs/core.md, "Several upstreams"): two real
 * fake upstream processes (the worker's `upstream` and this file's `second`) or a dead port,
 * with the service's shipped retry budget.
 */
import { describe, expect } from 'vitest';
import { createOpenAiCore } from '../../../src/core/openai/create-openai-core.js';
import { test as base, openAiEnv } from '../../helpers/fixtures.js';
import { postStream, replyOf } from '../../helpers/sse.js';
import { chat, http, type TestServer } from '../../helpers/test-server.js';
import { deadPort, startUpstream, testOptions, type Upstream } from './upstream-process.js';

const test = base
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
  .extend('secondProcess', { scope: 'file' }, async ({}, { onCleanup }) => {
    const second = await startUpstream();
    onCleanup(() => second.stop());
    return second;
  })
  .extend('second', async ({ secondProcess }) => {
    await secondProcess.reset();
    return secondProcess;
  });

/** The server's settings with `first` then `second` as its upstreams, retries as shipped. */
function twoUpstreams(first: string, second: Upstream, settings: Record<string, string> = {}) {
  return openAiEnv(
    second,
    { PLAUDER_OPENAI_BASE_URL: `${first},${second.baseUrl}`, ...settings },
    { retries: 'shipped' },
  );
}

async function requests(upstream: Upstream): Promise<number> {
  return (await upstream.received()).requests.length;
}

async function usedOf(server: TestServer, keyId: string): Promise<number> {
  return server.services.usage.used(keyId, server.services.quota.monthOf(Date.now()).month);
}

describe('several upstreams: a turn moves on before anything reached the client', () => {
  test('answers from the second upstream when the first is down, counted once', async ({
    serve,
    second,
  }) => {
    const dead = `http://127.0.0.1:${await deadPort()}/v1`;
    const server = await serve({ env: twoUpstreams(dead, second) });
    const { key, id } = await server.createKey();
    const res = await chat(server, key, { message: 'Hallo' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ reply: 'reply to: Hallo' });
    expect(await requests(second)).toBe(1);
    expect(await usedOf(server, id)).toBe(1);
  });

  test('moves on when the first answers 500, and when it answers 429 with Retry-After', async ({
    serve,
    upstream,
    second,
  }) => {
    const server = await serve({ env: twoUpstreams(upstream.baseUrl, second) });
    const { key } = await server.createKey();
    await upstream.script(
      { status: 500, body: { error: { message: 'down' } } },
      { status: 429, headers: { 'retry-after': '3' }, body: { error: { message: 'busy' } } },
    );
    await second.script({ content: 'vom zweiten' }, { content: 'wieder vom zweiten' });
    expect((await chat(server, key, { message: 'eins' })).json).toEqual({ reply: 'vom zweiten' });
    expect((await chat(server, key, { message: 'zwei' })).json).toEqual({
      reply: 'wieder vom zweiten',
    });
    expect(await requests(upstream)).toBe(2);
    expect(await requests(second)).toBe(2);
  });

  test('honours Retry-After before asking an upstream again once both were tried', async ({
    serve,
    upstream,
    second,
  }) => {
    const server = await serve({ env: twoUpstreams(upstream.baseUrl, second) });
    const { key } = await server.createKey();
    const busy = { status: 429, headers: { 'retry-after': '1' }, body: {} };
    await upstream.script(busy, { content: 'beim dritten Mal' });
    await second.script(busy);
    const res = await chat(server, key, { message: 'Hallo' });
    expect(res.json).toEqual({ reply: 'beim dritten Mal' });
    const [first, again] = (await upstream.received()).requests;
    // The third attempt went back to the first upstream only after its Retry-After.
    expect((again?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(950);
  });

  test('never moves on after a 4xx about the request: answers 500 and asks no other upstream', async ({
    serve,
    upstream,
    second,
  }) => {
    const server = await serve({ env: twoUpstreams(upstream.baseUrl, second) });
    const { key, id } = await server.createKey();
    const refusal = { error: { message: 'content policy', code: 'content_filter' } };
    await upstream.script({ status: 400, body: refusal });
    const res = await chat(server, key, { message: 'Hallo' });
    expect(res.status).toBe(500);
    expect(res.json.error.code).toBe('core_unavailable');
    expect(await requests(second)).toBe(0);
    expect(await usedOf(server, id)).toBe(0);
  });

  test('a plain reply slower than the attempt timeout is not generated twice on the same upstream (a 300 ms timeout keeps the test short)', async ({
    serve,
    upstream,
    second,
  }) => {
    const env = twoUpstreams(upstream.baseUrl, second, { PLAUDER_OPENAI_TIMEOUT: '300ms' });
    const server = await serve({ env });
    const { key } = await server.createKey();
    await upstream.script({ delayMs: 1_500, content: 'zu langsam' });
    const res = await chat(server, key, { message: 'Hallo' });
    expect(res.json).toEqual({ reply: 'reply to: Hallo' });
    expect(await requests(upstream)).toBe(1);
    expect(await requests(second)).toBe(1);
  });

  test('a stream slow to its first token moves to the next upstream (a 300 ms first-token deadline keeps the test short)', async ({
    serve,
    upstream,
    second,
  }) => {
    const env = twoUpstreams(upstream.baseUrl, second, {
      PLAUDER_OPENAI_FIRST_TOKEN_TIMEOUT: '300ms',
    });
    const server = await serve({ env });
    const { key, id } = await server.createKey();
    await upstream.script({ stream: { firstTokenMs: 2_000, pieces: ['zu ', 'spät'] } });
    await second.script({ stream: { pieces: ['recht', 'zeitig'] } });
    const answer = await postStream(`${server.url}/api/chat`, { key, body: { message: 'Hi' } });
    expect(replyOf(answer)).toEqual({ joined: 'rechtzeitig', done: 'rechtzeitig' });
    expect(await requests(upstream)).toBe(1);
    expect(await usedOf(server, id)).toBe(1);
  });

  test('a stream cut after a delta reached the client ends with an error event; no other upstream is asked', async ({
    serve,
    upstream,
    second,
  }) => {
    const server = await serve({ env: twoUpstreams(upstream.baseUrl, second) });
    const { key } = await server.createKey();
    await upstream.script({ stream: { pieces: ['Ein ', 'Teil ', 'und'], breakAfter: 2 } });
    const answer = await postStream(`${server.url}/api/chat`, { key, body: { message: 'Hi' } });
    expect(replyOf(answer).joined).toBe('Ein Teil');
    expect(answer.events.at(-1)?.event).toBe('error');
    expect(JSON.parse(answer.events.at(-1)?.data ?? '{}').error.code).toBe('core_unavailable');
    expect(await requests(second)).toBe(0);
  });

  test('the fair share holds as many turns as the pools together', async ({ upstream, second }) => {
    const options = testOptions(upstream.baseUrl, {
      maxConnections: 3,
      fallbacks: [{ baseUrl: second.baseUrl, apiKey: undefined, model: 'small' }],
    });
    const core = createOpenAiCore(options);
    expect(core.capacity).toBe(6);
    await core.close?.();
  });
});

describe('several upstreams: circuit breakers', () => {
  test('opens after the configured failures, answers 503 at once without an upstream call, probes after the cooldown and closes (2 failures, no retries: each turn is one attempt)', async ({
    serve,
    upstream,
  }) => {
    let now = Date.now();
    const server = await serve({
      clock: () => now,
      env: openAiEnv(upstream, { PLAUDER_OPENAI_BREAKER_FAILURES: '2' }),
    });
    const { key, id } = await server.createKey();
    const down = { status: 502, body: {} };
    await upstream.script(down, down);
    expect((await chat(server, key, { message: 'a' })).status).toBe(500);
    expect(await breakerGauge(server)).toBe(0);
    expect((await chat(server, key, { message: 'b' })).status).toBe(500);
    expect(await breakerGauge(server)).toBe(2);

    const refused = await chat(server, key, { message: 'c' });
    expect(refused.status).toBe(503);
    expect(refused.json.error.code).toBe('core_unavailable');
    expect(refused.headers.get('retry-after')).toBe('30');
    const v1 = await http(`${server.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', messages: [{ role: 'user', content: 'd' }] },
    });
    expect(v1.status).toBe(503);
    expect(v1.json.error.code).toBe('core_unavailable');
    // OpenAI's clients may come back after Retry-After (docs/openai.md, "Errors").
    expect(v1.headers.get('x-should-retry')).toBeNull();
    expect(v1.headers.get('retry-after')).toBe('30');
    expect(await requests(upstream)).toBe(2);
    expect(await usedOf(server, id)).toBe(0);
    const ready = await http(`${server.url}/readyz`);
    expect(ready.json).toEqual({
      status: 'ready',
      upstreams: [{ upstream: 0, state: 'open', retryInSeconds: 30 }],
    });

    now += 20_000;
    expect((await chat(server, key, { message: 'e' })).headers.get('retry-after')).toBe('10');
    now += 10_000;
    expect(await breakerGauge(server)).toBe(1);
    const probe = await chat(server, key, { message: 'wieder da?' });
    expect(probe.json).toEqual({ reply: 'reply to: wieder da?' });
    expect(await breakerGauge(server)).toBe(0);
    expect(await requests(upstream)).toBe(3);
    expect(await usedOf(server, id)).toBe(1);
  });

  test('a failed probe opens the breaker for another cooldown (1 failure opens it, no retries)', async ({
    serve,
    upstream,
  }) => {
    let now = Date.now();
    const server = await serve({
      clock: () => now,
      env: openAiEnv(upstream, { PLAUDER_OPENAI_BREAKER_FAILURES: '1' }),
    });
    const { key } = await server.createKey();
    await upstream.script({ status: 500, body: {} }, { status: 500, body: {} });
    expect((await chat(server, key, { message: 'a' })).status).toBe(500);
    now += 30_000;
    expect((await chat(server, key, { message: 'probe' })).status).toBe(500);
    const again = await chat(server, key, { message: 'b' });
    expect(again.status).toBe(503);
    expect(again.headers.get('retry-after')).toBe('30');
    expect(await requests(upstream)).toBe(2);
  });
});

/** `plauder_upstream_breaker_state` of the first upstream in `/metrics`. */
async function breakerGauge(server: TestServer): Promise<number | undefined> {
  const text = (await http(`${server.url}/metrics`)).text;
  const line = text.split('\n').find((l) => l.startsWith('plauder_upstream_breaker_state{'));
  expect(line).toMatch(/upstream="0"/);
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}
