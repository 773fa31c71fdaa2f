/**
 * What `/v1/messages` counts and stores, on both dialects (docs/contract.md, "The client goes
 * away", "Idempotent retries", "Anthropic's Messages door"): a client that leaves mid-stream
 * is charged once and nothing partial is stored; one that leaves before any content costs
 * nothing; an idempotent retry replays the kept message without counting; with
 * `X-Session-Id` a tool loop is stored, sealed, with its tool calls and results, and
 * `/api/chat` continues it. The official `@anthropic-ai/sdk` on its defaults, a real server,
 * a real upstream process.
 */
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect } from 'vitest';
import type { Upstream } from '../../core/openai/upstream-process.js';
import { test as base, openAiEnv } from '../../helpers/fixtures.js';
import { postStream, until } from '../../helpers/sse.js';
import { http, type TestServer } from '../../helpers/test-server.js';

/**
 * A server in front of the (reset) upstream, closed after the test. The retries the service
 * ships with: a client that left must not be asked for again by a retry.
 */
const test = base.extend('gateway', async ({ serve, upstream }) => {
  const s = await serve({
    env: openAiEnv(upstream, { PLAUDER_PLANS: 'standard=1000,one=1' }, { retries: 'shipped' }),
  });
  return { up: upstream, s };
});

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

const upstreamCalls = async (up: Upstream) => (await up.received()).requests.length;

const anthropic = (s: TestServer, key: string, headers: Record<string, string> = {}) =>
  new Anthropic({ baseURL: s.url, apiKey: key, defaultHeaders: headers });

const ask = { model: 'plauder-de', max_tokens: 256 } as const;

describe('a client that leaves a streamed message', () => {
  test('mid-stream: the turn counts once, nothing partial is stored, a 1-a-month key gets no more', async ({
    gateway: { up, s },
  }) => {
    await up.script({ stream: { pieces: ['Es ', 'war ', 'einmal'], holdAfter: 2 } });
    const { id, key } = await s.createKey({ plan: 'one' });
    const client = anthropic(s, key, { 'X-Session-Id': 'left' });
    const stream = await client.messages.create({
      ...ask,
      stream: true,
      messages: [{ role: 'user', content: 'Märchen' }],
    });
    let pieces = 0;
    for await (const event of stream) {
      if (event.type === 'content_block_delta' && ++pieces === 2) break;
    }
    await until(async () => (await up.received()).requests.at(-1)?.abortedAt, 'the upstream abort');
    const error = await client.messages
      .create({ ...ask, messages: [{ role: 'user', content: 'Noch eins' }] })
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect(await used(s, id)).toBe(1);
    expect(await upstreamCalls(up)).toBe(1);
    expect(await s.services.sessions.read(id, 'left', Date.now())).toBeUndefined();
  });

  test('before any content (after message_start): nothing is counted or stored', async ({
    gateway: { up, s },
  }) => {
    await up.script({ stream: { pieces: ['Es ', 'war'], holdAfter: 0 } });
    const { id, key } = await s.createKey();
    const controller = new AbortController();
    const events: string[] = [];
    const answering = postStream(`${s.url}/v1/messages`, {
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'x-session-id': 'early' },
      body: { ...ask, stream: true, messages: [{ role: 'user', content: 'Märchen' }] },
      signal: controller.signal,
      onEvent: (event) => {
        events.push(String(event.event));
        if (event.event === 'message_start') controller.abort();
      },
    });
    await expect(answering).rejects.toThrow();
    expect(events).toEqual(['message_start']);
    await until(async () => (await up.received()).requests.at(-1)?.abortedAt, 'the upstream abort');
    await until(async () => ((await used(s, id)) === 0 ? true : undefined), 'the month refunded');
    expect(await s.services.sessions.read(id, 'early', Date.now())).toBeUndefined();
  });
});

describe('an upstream that fails after the stream began', () => {
  test('ends the stream with an error event that the SDK raises; nothing is stored', async ({
    gateway: { up, s },
  }) => {
    await up.script({ stream: { pieces: ['Es ', 'war ', 'einmal'], breakAfter: 2 } });
    const { id, key } = await s.createKey();
    const stream = anthropic(s, key, { 'X-Session-Id': 'broken' }).messages.stream({
      ...ask,
      messages: [{ role: 'user', content: 'Märchen' }],
    });
    const pieces: string[] = [];
    stream.on('text', (text) => pieces.push(text));
    const error = await stream.finalMessage().then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as InstanceType<typeof Anthropic.APIError>).type).toBe('api_error');
    expect(pieces.join('')).toBe('Es war');
    expect(await s.services.sessions.read(id, 'broken', Date.now())).toBeUndefined();
  });
});

describe('an idempotent retry', () => {
  test('replays the kept message without counting or asking the upstream; the key with another body is 422', async ({
    gateway: { up, s },
  }) => {
    const { id, key } = await s.createKey();
    const client = anthropic(s, key);
    const body = { ...ask, messages: [{ role: 'user' as const, content: 'Hallo' }] };
    const headers = { 'Idempotency-Key': 'retry-1' };
    const first = await client.messages.create(body, { headers }).withResponse();
    const again = await client.messages.create(body, { headers }).withResponse();
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data).toEqual(first.data);
    expect(await used(s, id)).toBe(1);
    expect(await upstreamCalls(up)).toBe(1);

    // A stream asked with the same key and body is another request (the body differs).
    const streamed = await http(`${s.url}/v1/messages`, {
      headers: { 'x-api-key': key, 'idempotency-key': 'retry-1' },
      body: { ...body, stream: true },
    });
    expect(streamed.status).toBe(422);
    expect(streamed.json.error).toMatchObject({
      type: 'invalid_request_error',
      details: { error_code: 'idempotency_key_reused' },
    });
    expect(await used(s, id)).toBe(1);
  });

  test('of a streamed message replays it as one text delta', async ({ gateway: { up, s } }) => {
    const { id, key } = await s.createKey();
    const send = () =>
      postStream(`${s.url}/v1/messages`, {
        headers: { 'x-api-key': key, 'idempotency-key': 'retry-stream' },
        body: { ...ask, stream: true, messages: [{ role: 'user', content: 'Hallo du' }] },
      });
    const first = await send();
    const again = await send();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const text = (answer: typeof first) =>
      answer.events
        .filter((event) => event.event === 'content_block_delta')
        .map((event) => JSON.parse(event.data).delta.text)
        .join('');
    expect(text(again)).toBe(text(first));
    expect(again.events.filter((event) => event.event === 'content_block_delta')).toHaveLength(1);
    expect(again.events.at(-1)?.event).toBe('message_stop');
    expect(await used(s, id)).toBe(1);
    expect(await upstreamCalls(up)).toBe(1);
  });
});

describe('server-side memory (X-Session-Id)', () => {
  test('stores a tool loop with its calls and results, sealed; /api/chat continues it as text', async ({
    gateway: { up, s },
  }) => {
    const { id, key } = await s.createKey();
    const client = anthropic(s, key, { 'X-Session-Id': 'agent-a' });
    const tools = [
      {
        name: 'get_weather',
        input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
      },
    ];
    const first = await client.messages.create({
      ...ask,
      tools,
      messages: [{ role: 'user', content: 'Weather in Berlin?' }],
    });
    const use = first.content.find((block) => block.type === 'tool_use');
    if (use?.type !== 'tool_use') throw new Error('expected a tool_use block');
    // The stored window supplies the question and the call: the agent sends only the result.
    const second = await client.messages.create({
      ...ask,
      tools,
      messages: [
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'tool said: sunny' }]);
    const text = await http(`${s.url}/api/chat`, {
      key,
      body: { message: 'Danke', sessionId: 'agent-a' },
    });
    expect(text.json).toEqual({ reply: 'reply to: Danke' });
    const turns = await s.services.sessions.read(id, 'agent-a', Date.now());
    expect(turns?.map((t) => [t.message, t.reply])).toEqual([
      ['Weather in Berlin?', ''],
      ['sunny', 'tool said: sunny'],
      ['Danke', 'reply to: Danke'],
    ]);
    const sent = (await up.received()).requests.at(-1)?.body as { messages: unknown[] };
    expect(sent.messages.slice(1, 3)).toEqual([
      { role: 'user', content: 'Weather in Berlin?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: use.id,
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Berlin"}' },
          },
        ],
      },
    ]);
    expect(await used(s, id)).toBe(3);
  });
});
