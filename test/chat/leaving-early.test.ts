/**
 * A key cannot take replies for free by leaving early (docs/contract.md, "The client goes
 * away"): a turn counts once any part of its reply reached the client, on every door; a
 * client that leaves before that is refunded the month but not the minute, so no plan can
 * be exceeded in upstream calls; an MCP batch counts only the answers that leave. A real
 * server, a real upstream process that holds its last piece, clients that hang up at the
 * marked moment.
 */
import OpenAI from 'openai';
import { describe, expect } from 'vitest';
import type { Upstream } from '../core/openai/upstream-process.js';
import { test as base, openAiEnv } from '../helpers/fixtures.js';
import { postStream, until } from '../helpers/sse.js';
import { http, type TestServer } from '../helpers/test-server.js';

/**
 * A server in front of the (reset) upstream, closed after the test. The retries the service
 * ships with: a client that left must not be asked for again by a retry.
 */
const test = base.extend('gateway', async ({ serve, upstream }) => {
  const s = await serve({
    env: openAiEnv(
      upstream,
      { PLAUDER_PLANS: 'standard=1000,one=1,burst=1000/month+2/minute' },
      { retries: 'shipped' },
    ),
  });
  return { up: upstream, s };
});

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

const upstreamCalls = async (up: Upstream) => (await up.received()).requests.length;

/** Three pieces; the upstream holds the last one until released (never, here). */
const heldBeforeTheEnd = { stream: { pieces: ['Es ', 'war ', 'einmal'], holdAfter: 2 } };

describe('leaving just before the end of a streamed reply', () => {
  test('/api/chat: the turn counts; a 1-a-month key gets nothing more from the upstream', async ({
    gateway: { up, s },
  }) => {
    await up.script(heldBeforeTheEnd, heldBeforeTheEnd);
    const { id, key } = await s.createKey({ plan: 'one' });
    const controller = new AbortController();
    let deltas = 0;
    const answering = postStream(`${s.url}/api/chat`, {
      key,
      body: { message: 'Märchen' },
      signal: controller.signal,
      onEvent: (event) => {
        if (event.event === 'delta' && ++deltas === 2) controller.abort();
      },
    });
    await expect(answering).rejects.toThrow();
    await until(async () => (await up.received()).requests.at(-1)?.abortedAt, 'the upstream abort');
    const again = await http(`${s.url}/api/chat`, { key, body: { message: 'Noch eins' } });
    expect(again.status).toBe(429);
    expect(await used(s, id)).toBe(1);
    expect(await upstreamCalls(up)).toBe(1);
  });

  test('/v1 (openai client): the turn counts; a 1-a-month key gets nothing more from the upstream', async ({
    gateway: { up, s },
  }) => {
    await up.script(heldBeforeTheEnd, heldBeforeTheEnd);
    const { id, key } = await s.createKey({ plan: 'one' });
    const client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: key });
    const stream = await client.chat.completions.create({
      model: 'plauder-de',
      messages: [{ role: 'user', content: 'Märchen' }],
      stream: true,
    });
    let pieces = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content && ++pieces === 2) break;
    }
    await until(async () => (await up.received()).requests.at(-1)?.abortedAt, 'the upstream abort');
    const error = await client.chat.completions
      .create({ model: 'plauder-de', messages: [{ role: 'user', content: 'Noch eins' }] })
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(await used(s, id)).toBe(1);
    expect(await upstreamCalls(up)).toBe(1);
  });
});

describe('leaving before the first token', () => {
  test('is refunded for the month but keeps the minute: at most the minute limit of upstream calls', async ({
    gateway: { up, s },
  }) => {
    const { id, key } = await s.createKey({ plan: 'burst' });
    const attempts = 4;
    for (let i = 0; i < attempts; i++) {
      await up.script({ stream: { pieces: ['Es ', 'war'], holdAfter: 0 } });
    }
    const statuses: number[] = [];
    for (let i = 0; i < attempts; i++) {
      const before = await upstreamCalls(up);
      const controller = new AbortController();
      const answering = postStream(`${s.url}/api/chat`, {
        key,
        body: { message: 'Märchen' },
        signal: controller.signal,
      }).then(
        (answer) => answer.status,
        () => 'left' as const,
      );
      const reached = await Promise.race([
        until(async () => ((await upstreamCalls(up)) > before ? true : undefined), 'the upstream'),
        answering,
      ]);
      if (reached === true) {
        controller.abort();
        await answering;
        await until(async () => (await up.received()).requests.at(-1)?.abortedAt, 'the abort');
        statuses.push(200);
      } else statuses.push(reached as number);
    }
    expect(statuses).toEqual([200, 200, 429, 429]);
    expect(await upstreamCalls(up)).toBe(2);
    await until(async () => ((await used(s, id)) === 0 ? true : undefined), 'the month refunded');
  });
});

describe('an MCP batch whose client leaves before the answers', () => {
  test('counts and stores neither the fast call that finished nor the slow one', async ({
    gateway: { up, s },
  }) => {
    await up.script({ content: 'schnell' }, { content: 'langsam', delayMs: 60_000 });
    const { id, key } = await s.createKey();
    const call = (rpcId: number, message: string) => ({
      jsonrpc: '2.0',
      id: rpcId,
      method: 'tools/call',
      params: { name: 'chat', arguments: { message, sessionId: 'batch' } },
    });
    const controller = new AbortController();
    const answering = fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify([call(1, 'eins'), call(2, 'zwei')]),
      signal: controller.signal,
    });
    // Both calls reached the upstream and the fast one was answered.
    await until(async () => ((await upstreamCalls(up)) === 2 ? true : undefined), 'both calls');
    expect(await used(s, id)).toBe(2);
    controller.abort();
    await expect(answering).rejects.toThrow();
    await until(
      async () => (await up.received()).requests.at(-1)?.abortedAt,
      'the slow call aborted',
    );
    await until(async () => ((await used(s, id)) === 0 ? true : undefined), 'both refunded');
    expect(await s.services.sessions.read(id, 'batch', Date.now())).toBeUndefined();
  });

  test('counts and stores both when the answers leave', async ({ gateway: { up, s } }) => {
    const { id, key } = await s.createKey();
    const calls = [1, 2].map((rpcId) => ({
      jsonrpc: '2.0',
      id: rpcId,
      method: 'tools/call',
      params: { name: 'chat', arguments: { message: `m${rpcId}`, sessionId: 'batch-ok' } },
    }));
    const res = await http(`${s.url}/mcp`, {
      key,
      headers: { accept: 'application/json, text/event-stream' },
      body: calls,
    });
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(2);
    expect(await used(s, id)).toBe(2);
    const turns = await s.services.sessions.read(id, 'batch-ok', Date.now());
    expect(turns?.map((t) => t.message).sort()).toEqual(['m1', 'm2']);
    expect(await upstreamCalls(up)).toBe(2);
  });
});
