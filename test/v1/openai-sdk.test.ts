/**
 * The OpenAI-compatible front door (docs/contract.md, "OpenAI-compatible door"), driven by the official `openai` npm
 * package pointed at a real plauder server on loopback, with only its base URL and key
 * changed: models, plain and streamed completions, history, X-Session-Id, and errors raised
 * as the client's own classes. Raw HTTP where the bytes matter (replays, [DONE]).
 */
import OpenAI from 'openai';
import { describe, expect } from 'vitest';
import { releaseWhenSeen, type Upstream } from '../core/openai/upstream-process.js';
import { test as base, openAiEnv } from '../helpers/fixtures.js';
import { createGatedCore } from '../helpers/gated-core.js';
import { readSse, until } from '../helpers/sse.js';
import { http, type TestServer, type TestServerOptions } from '../helpers/test-server.js';

/** Test servers (closed after the test) with the plans these tests use. */
const test = base.extend(
  'server',
  async ({ serve }) =>
    (options: TestServerOptions = {}) =>
      serve({
        ...options,
        env: { PLAUDER_PLANS: 'standard=1000,tiny=1,minute=1000/month+1/minute', ...options.env },
      }),
);

const llmEnv = (up: Upstream) =>
  openAiEnv(up, { PLAUDER_OPENAI_SYSTEM_PROMPT_EN: 'Operator prompt.' });

/** An unmodified client, on its default settings: only the base URL and the key are ours. */
const client = (s: TestServer, key: string) => new OpenAI({ baseURL: `${s.url}/v1`, apiKey: key });

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

async function caught(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof OpenAI.APIError))
    throw new Error(`expected an APIError, got ${String(error)}`);
  return error;
}

describe('models', () => {
  test('lists plauder-de and plauder-en and retrieves one', async ({ server }) => {
    const s = await server();
    const { key } = await s.createKey();
    const models = await client(s, key).models.list();
    expect(models.data.map((m) => [m.id, m.object, m.owned_by])).toEqual([
      ['plauder-de', 'model', 'plauder'],
      ['plauder-en', 'model', 'plauder'],
    ]);
    expect((await client(s, key).models.retrieve('plauder-en')).id).toBe('plauder-en');
    const missing = await caught(client(s, key).models.retrieve('gpt-4o'));
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('a plain completion', () => {
  test('is a chat.completion with the reply of the endpoint of its language, counted once', async ({
    server,
  }) => {
    const s = await server();
    const { id, key } = await s.createKey();
    const { data, response } = await client(s, key)
      .chat.completions.create({
        model: 'plauder-en',
        messages: [{ role: 'user', content: 'What does plauder cost?' }],
      })
      .withResponse();

    expect(data.object).toBe('chat.completion');
    expect(data.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(data.model).toBe('plauder-en');
    expect(Math.abs(data.created - Date.now() / 1000)).toBeLessThan(60);
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.choices[0]?.message.role).toBe('assistant');
    const plain = await http(`${s.url}/api/chat-en`, {
      key,
      body: { message: 'What does plauder cost?' },
    });
    expect(data.choices[0]?.message.content).toBe(plain.json.reply);
    expect(data.usage?.completion_tokens).toBeGreaterThan(0);
    expect(data.usage?.total_tokens).toBe(
      (data.usage?.prompt_tokens ?? 0) + (data.usage?.completion_tokens ?? 0),
    );
    expect(response.headers.get('x-ratelimit-remaining')).toBe('999');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await used(s, id)).toBe(2);
    const line = s.logs.map((l) => JSON.parse(l)).find((l) => l.route === '/v1/chat/completions');
    expect(line).toMatchObject({ status: 200, outcome: 'reply', keyId: id });
    const metrics = await http(`${s.url}/metrics`);
    expect(metrics.text).toMatch(
      /plauder_chat_outcomes_total\{endpoint="\/v1\/chat\/completions",outcome="reply"\} 1/,
    );
  });

  test("passes the history, content parts and the client's system messages to an LLM core, with the upstream's usage", async ({
    server,
    upstream: up,
  }) => {
    const s = await server({ env: llmEnv(up) });
    const { key } = await s.createKey();
    const completion = await client(s, key).chat.completions.create({
      model: 'plauder-en',
      messages: [
        { role: 'system', content: 'Answer like a pirate.' },
        { role: 'user', content: 'My name is Ada.' },
        { role: 'assistant', content: 'Ahoy, Ada!' },
        { role: 'user', content: [{ type: 'text', text: 'What is my name?' }] },
      ],
      temperature: 0.3,
      max_tokens: 40,
    });

    expect(completion.choices[0]?.message.content).toBe('reply to: What is my name?');
    expect(completion.usage).toEqual({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
    const sent = (await up.received()).requests.at(-1)?.body as Record<string, unknown>;
    expect(sent.messages).toEqual([
      { role: 'system', content: 'Operator prompt.' },
      { role: 'system', content: 'Answer like a pirate.' },
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Ahoy, Ada!' },
      { role: 'user', content: 'What is my name?' },
    ]);
    expect(sent).toMatchObject({ temperature: 0.3, max_tokens: 40, model: 'test-model' });
  });

  test('with X-Session-Id: the stored session is the history, and the turn is stored', async ({
    server,
    upstream: up,
  }) => {
    const s = await server({ env: llmEnv(up) });
    const { id, key } = await s.createKey();
    const ai = client(s, key);
    const headers = { 'X-Session-Id': 'sdk-memory' };
    await ai.chat.completions.create(
      { model: 'plauder-en', messages: [{ role: 'user', content: 'My name is Ada.' }] },
      { headers },
    );
    await ai.chat.completions.create(
      { model: 'plauder-en', messages: [{ role: 'user', content: 'What is my name?' }] },
      { headers },
    );
    await ai.chat.completions.create({
      model: 'plauder-en',
      messages: [{ role: 'user', content: 'Not remembered.' }],
    });

    const sent = (await up.received()).requests.map(
      (r) => (r.body as { messages: unknown[] }).messages,
    );
    expect(sent[1]).toEqual([
      { role: 'system', content: 'Operator prompt.' },
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'reply to: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    const turns = await s.services.sessions.read(id, 'sdk-memory', Date.now());
    expect(turns?.map((t) => t.message)).toEqual(['My name is Ada.', 'What is my name?']);
  });
});

describe('a streamed completion', () => {
  test('arrives as chat.completion.chunks: the role first, the content, finish_reason, usage', async ({
    server,
  }) => {
    const s = await server();
    const { id, key } = await s.createKey();
    const stream = await client(s, key).chat.completions.create({
      model: 'plauder-de',
      messages: [{ role: 'user', content: 'Was kostet plauder?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);

    expect(chunks[0]?.choices[0]?.delta).toMatchObject({ role: 'assistant', content: '' });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(
      chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'plauder-de'),
    ).toBe(true);
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    const plain = await http(`${s.url}/api/chat`, {
      key,
      body: { message: 'Was kostet plauder?' },
    });
    expect(content).toBe(plain.json.reply);
    expect(chunks.filter((c) => (c.choices[0]?.delta.content ?? '') !== '').length).toBeGreaterThan(
      1,
    );
    const finish = chunks.at(-2);
    expect(finish?.choices[0]?.finish_reason).toBe('stop');
    const usage = chunks.at(-1);
    expect(usage?.choices).toEqual([]);
    expect(usage?.usage?.completion_tokens).toBeGreaterThan(0);
    expect(await used(s, id)).toBe(2);
  });

  test('ends with data: [DONE], and has no usage chunk unless asked', async ({ server }) => {
    const s = await server();
    const { key } = await s.createKey();
    const response = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'plauder-en',
        stream: true,
        messages: [{ role: 'user', content: 'Hello!' }],
      }),
    });
    const answer = await readSse(response);
    expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(answer.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(answer.events.at(-1)?.data).toBe('[DONE]');
    expect(answer.events.every((e) => e.event === undefined)).toBe(true);
    const chunks = answer.events.slice(0, -1).map((e) => JSON.parse(e.data));
    expect(chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
  });

  test("streams an LLM core's tokens as they arrive, with the upstream's usage", async ({
    server,
    upstream: up,
  }) => {
    await up.script({
      stream: {
        pieces: ['Ahoy ', 'there'],
        holdAfter: 1,
        usage: { prompt_tokens: 12, completion_tokens: 2 },
      },
    });
    const s = await server({ env: llmEnv(up) });
    const { key } = await s.createKey();
    const stream = await client(s, key).chat.completions.create({
      model: 'plauder-en',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    // The upstream holds ' there' back until the client has seen 'Ahoy'.
    const held = releaseWhenSeen(up);
    const arrivals: string[] = [];
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      const text = chunk.choices[0]?.delta.content;
      if (text) {
        arrivals.push(text);
        held.seen();
      }
      if (chunk.usage) usage = chunk.usage;
    }
    expect(held.seenWhileHeld).toBe(true);
    expect(arrivals).toEqual(['Ahoy', ' there']);
    expect(usage).toEqual({ prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 });
  });

  test('raises an APIError when the core fails mid-stream; counted once, the part was delivered', async ({
    server,
    upstream: up,
  }) => {
    await up.script({ stream: { pieces: ['Ahoy ', 'there'], breakAfter: 1 } });
    const s = await server({ env: llmEnv(up) });
    const { id, key } = await s.createKey();
    const stream = await client(s, key).chat.completions.create({
      model: 'plauder-en',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    const texts: string[] = [];
    const error = await caught(
      (async () => {
        for await (const chunk of stream) texts.push(chunk.choices[0]?.delta.content ?? '');
      })(),
    );
    expect(texts.join('')).toBe('Ahoy');
    expect(error.error).toMatchObject({ code: 'core_unavailable', type: 'server_error' });
    expect(await used(s, id)).toBe(1);
  });
});

describe('errors, as the client raises them', () => {
  test('AuthenticationError (401) for a bad key, with WWW-Authenticate', async ({ server }) => {
    const s = await server();
    const error = await caught(
      client(s, 'plauder_wrong').chat.completions.create({
        model: 'plauder-de',
        messages: [{ role: 'user', content: 'Hallo' }],
      }),
    );
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.code).toBe('invalid_api_key');
    expect(error.headers?.get('www-authenticate')).toBe('Bearer realm="plauder"');
    expect(await caught(client(s, 'plauder_wrong').models.list())).toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
  });

  test('PermissionDeniedError (403) for an inactive plan', async ({ server }) => {
    const s = await server();
    const { key } = await s.createKey({ active: false });
    const error = await caught(
      client(s, key).chat.completions.create({
        model: 'plauder-de',
        messages: [{ role: 'user', content: 'Hallo' }],
      }),
    );
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error.code).toBe('plan_inactive');
  });

  test('RateLimitError (429) when the month is used up, before the body is judged', async ({
    server,
  }) => {
    const s = await server();
    const { key } = await s.createKey({ plan: 'tiny' });
    const ai = client(s, key);
    await ai.chat.completions.create({
      model: 'plauder-de',
      messages: [{ role: 'user', content: 'Hallo' }],
    });
    const error = await caught(
      ai.chat.completions.create({
        model: 'plauder-de',
        n: 3,
        messages: [{ role: 'user', content: 'Hallo' }],
      }),
    );
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.code).toBe('quota_exceeded');
    expect(Number(error.headers?.get('retry-after'))).toBeGreaterThan(0);
  });

  test('RateLimitError (429 rate_limited) at the per-minute limit', async ({ server }) => {
    const s = await server();
    const { key } = await s.createKey({ plan: 'minute' });
    const ai = client(s, key);
    await ai.chat.completions.create({
      model: 'plauder-de',
      messages: [{ role: 'user', content: 'Hallo' }],
    });
    // On its defaults the client rightly waits for the minute to free up and retries
    // (no x-should-retry: false); this test reads the refusal itself.
    const error = await caught(
      ai.chat.completions.create(
        { model: 'plauder-de', messages: [{ role: 'user', content: 'Hallo' }] },
        { maxRetries: 0 },
      ),
    );
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.code).toBe('rate_limited');
    expect(Number(error.headers?.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(error.headers?.get('x-should-retry')).toBeNull();
  });

  test.for<[string, object, string]>([
    ['n', { n: 2 }, 'n'],
    ['tools', { tools: [{ type: 'function', function: { name: 'f' } }] }, 'tools'],
    ['audio output', { audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
    [
      'an image part',
      {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look' },
              { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
            ],
          },
        ],
      },
      'messages[0].content[1]',
    ],
    [
      'a last message that is not the user',
      { messages: [{ role: 'assistant', content: 'Hi' }] },
      'messages',
    ],
    ['an empty message list', { messages: [] }, 'messages'],
    [
      'a tool message',
      { messages: [{ role: 'tool', content: 'x', tool_call_id: 'a' }] },
      'messages[0]',
    ],
    ['a temperature out of range', { temperature: 7 }, 'temperature'],
  ])(
    'BadRequestError (400) naming the parameter for %s',
    async ([_name, extra, param], { server }) => {
      const s = await server();
      const { id, key } = await s.createKey();
      const body = {
        model: 'plauder-en',
        messages: [{ role: 'user', content: 'Hello' }],
        ...extra,
      };
      const error = await caught(
        client(s, key).chat.completions.create(
          body as OpenAI.ChatCompletionCreateParamsNonStreaming,
        ),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.param).toBe(param);
      expect(error.type).toBe('invalid_request_error');
      expect(error.message.length).toBeGreaterThan(0);
      expect(await used(s, id)).toBe(0);
    },
  );

  test('NotFoundError (404 model_not_found) for an unknown model', async ({ server }) => {
    const s = await server();
    const { key } = await s.createKey();
    const error = await caught(
      client(s, key).chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.code).toBe('model_not_found');
    expect(error.param).toBe('model');
  });

  test('400 for a body that is not JSON, and OpenAI-shaped 404s for unknown /v1 routes', async ({
    server,
  }) => {
    const s = await server();
    const { key } = await s.createKey();
    const broken = await http(`${s.url}/v1/chat/completions`, {
      key,
      raw: '{not json',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    expect(broken.json).toEqual({
      error: {
        message: expect.any(String),
        type: 'invalid_request_error',
        param: null,
        code: 'body_invalid',
      },
    });
    const unknown = await http(`${s.url}/v1/embeddings`, { key, body: {} });
    expect(unknown.status).toBe(404);
    expect(unknown.json.error).toMatchObject({ type: 'invalid_request_error', code: 'not_found' });
  });

  test('InternalServerError (500) with the core failure code, refunded', async ({ server }) => {
    const core = createGatedCore();
    const s = await server({ core });
    const { id, key } = await s.createKey();
    const pending = caught(
      client(s, key).chat.completions.create({
        model: 'plauder-de',
        messages: [{ role: 'user', content: 'Hallo' }],
      }),
    );
    await core.waitForCalls(1);
    core.calls[0]?.fail();
    const error = await pending;
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.code).toBe('core_unavailable');
    expect(JSON.stringify(error.error)).not.toMatch(/failed on purpose/);
    expect(await used(s, id)).toBe(0);
  });
});

describe('idempotency', () => {
  const send = (s: TestServer, key: string, idempotencyKey: string, body: object) =>
    http(`${s.url}/v1/chat/completions`, {
      key,
      headers: { 'idempotency-key': idempotencyKey },
      body,
    });

  test('replays a completion byte for byte, plain and streamed, without counting again', async ({
    server,
  }) => {
    const s = await server();
    const { id, key } = await s.createKey();
    const body = { model: 'plauder-de', messages: [{ role: 'user', content: 'Hallo' }] };
    const first = await send(s, key, 'once', body);
    const again = await send(s, key, 'once', body);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const streamed = { ...body, stream: true, stream_options: { include_usage: true } };
    const firstStream = await send(s, key, 'stream-once', streamed);
    const replayedStream = await send(s, key, 'stream-once', streamed);
    expect(replayedStream.headers.get('idempotent-replayed')).toBe('true');
    const content = (text: string) =>
      text
        .split('\n\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice(6)));
    const joined = (text: string) =>
      content(text)
        .map((c) => c.choices[0]?.delta?.content ?? '')
        .join('');
    expect(joined(replayedStream.text)).toBe(joined(firstStream.text));
    expect(content(replayedStream.text).at(-1)).toEqual(content(firstStream.text).at(-1));
    expect(content(replayedStream.text)[0].id).toBe(content(firstStream.text)[0].id);
    expect(await used(s, id)).toBe(2);
  });

  test('ConflictError (409) while the first runs, UnprocessableEntityError (422) for another body', async ({
    server,
  }) => {
    const core = createGatedCore();
    const s = await server({ core });
    const { key } = await s.createKey();
    const ai = client(s, key);
    const body = {
      model: 'plauder-de' as const,
      messages: [{ role: 'user' as const, content: 'Hallo' }],
    };
    const options = { headers: { 'Idempotency-Key': 'busy' } };
    const first = ai.chat.completions.create(body, options);
    await core.waitForCalls(1);
    const during = await caught(ai.chat.completions.create(body, options));
    expect(during).toBeInstanceOf(OpenAI.ConflictError);
    expect(during.code).toBe('idempotency_key_in_flight');
    core.calls[0]?.release('Fertig.');
    expect((await first).choices[0]?.message.content).toBe('Fertig.');
    const other = await caught(
      ai.chat.completions.create(
        { ...body, messages: [{ role: 'user', content: 'Anders' }] },
        options,
      ),
    );
    expect(other).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(other.code).toBe('idempotency_key_reused');
  });
});

describe('a client that leaves mid-stream', () => {
  test('cancels the upstream, counts the turn whose first piece it read, and stores nothing', async ({
    server,
    upstream: up,
  }) => {
    await up.script({ stream: { pieces: ['Ahoy ', 'there'], gapMs: 10_000 } });
    const s = await server({ env: llmEnv(up) });
    const { id, key } = await s.createKey();
    const stream = await client(s, key).chat.completions.create(
      { model: 'plauder-en', messages: [{ role: 'user', content: 'Hi' }], stream: true },
      { headers: { 'X-Session-Id': 'gone' } },
    );
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break;
    }
    await until(async () => (await up.received()).requests.at(-1)?.abortedAt, 'the upstream abort');
    // A later turn of the same key ends after the first one's bookkeeping.
    await client(s, key).chat.completions.create({
      model: 'plauder-en',
      messages: [{ role: 'user', content: 'Again' }],
    });
    expect(await used(s, id)).toBe(2);
    expect(await s.services.sessions.read(id, 'gone', Date.now())).toBeUndefined();
  });
});
