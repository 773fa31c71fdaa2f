/**
 * `/v1/messages` as Anthropic's clients use it (docs/contract.md, "Anthropic's Messages
 * door"): the official `@anthropic-ai/sdk` and the Vercel AI SDK's `@ai-sdk/anthropic`, each
 * on its default settings (retries included) with only the base URL and the key changed,
 * against a real plauder server with the `openai` core in front of a real upstream process
 * that calls tools (test/fixtures/openai-upstream.mjs); and the built-in core, which takes
 * text only and refuses tools and images by name.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import Anthropic from '@anthropic-ai/sdk';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import type { Upstream } from '../../core/openai/upstream-process.js';
import { test as base, openAiEnv } from '../../helpers/fixtures.js';
import { http, type TestServer } from '../../helpers/test-server.js';

const test = base
  /**
   * A plauder server, closed after the test; with an upstream, its core is `openai` in front
   * of it, on the retry count the service ships with (the clients keep theirs too).
   */
  .extend(
    'server',
    async ({ serve }) =>
      (up?: Upstream): Promise<TestServer> =>
        serve({
          env: {
            PLAUDER_PLANS: 'standard=1000,tiny=1',
            ...(up
              ? openAiEnv(
                  up,
                  {
                    PLAUDER_OPENAI_RETRY_BASE_DELAY: '10ms',
                    PLAUDER_OPENAI_RETRY_MAX_DELAY: '20ms',
                  },
                  { retries: 'shipped' },
                )
              : {}),
          },
        }),
  )
  /** A server with the `openai` core in front of the (reset) upstream, and a key of it. */
  .extend('gateway', async ({ server, upstream }) => {
    const s = await server(upstream);
    const { id, key } = await s.createKey();
    return { up: upstream, s, id, key };
  });

/** The same test without and with server-side memory (`X-Session-Id: sessionId`). */
const bothMemories = (sessionId: string): [string, Record<string, string>][] => [
  ['', {}],
  [' with X-Session-Id', { 'X-Session-Id': sessionId }],
];

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

/** The official client exactly as a user makes it: only the base URL and the key are ours. */
const anthropic = (s: TestServer, key: string, headers: Record<string, string> = {}) =>
  new Anthropic({ baseURL: s.url, apiKey: key, defaultHeaders: headers });

/** How many requests plauder answered on `/v1/messages` (every attempt of a client). */
const messageRequests = (s: TestServer) =>
  s.logs.filter((line) => line.includes('"route":"/v1/messages"')).length;

async function caught(promise: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof Anthropic.APIError)) throw new Error(`expected an APIError: ${error}`);
  return error;
}

/** The chat requests the upstream received, as their bodies. */
async function upstreamBodies(up: Upstream): Promise<Record<string, unknown>[]> {
  const { requests } = await up.received();
  return requests.map((request) => request.body as Record<string, unknown>);
}

/** The messages of the upstream's last request after the operator's system prompt. */
async function lastMessages(up: Upstream): Promise<unknown[] | undefined> {
  const sent = (await upstreamBodies(up)).at(-1);
  return (sent?.messages as unknown[] | undefined)?.slice(1);
}

const weatherTool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: {
    type: 'object' as const,
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};

const hello = { model: 'plauder-en', max_tokens: 1024 } as const;

describe('@anthropic-ai/sdk on its defaults', () => {
  test.for(bothMemories('sdk-plain'))(
    'messages.create answers with a text block, and the next turn sees the first%s',
    async ([name, headers], { gateway: { up, s, id, key } }) => {
      const client = anthropic(s, key, headers);
      const first = await client.messages.create({
        ...hello,
        messages: [{ role: 'user', content: 'Hello' }],
      });
      expect(first.type).toBe('message');
      expect(first.id).toMatch(/^msg_/);
      expect(first.content).toEqual([{ type: 'text', text: 'reply to: Hello' }]);
      expect(first.stop_reason).toBe('end_turn');
      expect(first.usage.input_tokens).toBeGreaterThan(0);
      expect(first.usage.output_tokens).toBeGreaterThan(0);
      // With server-side memory the client sends only the new message.
      const earlier =
        name === ''
          ? [
              { role: 'user' as const, content: 'Hello' },
              { role: 'assistant' as const, content: first.content },
            ]
          : [];
      const second = await client.messages.create({
        ...hello,
        system: 'Be brief.',
        messages: [...earlier, { role: 'user', content: 'Again' }],
      });
      expect(second.content).toEqual([{ type: 'text', text: 'reply to: Again' }]);
      expect(await lastMessages(up)).toEqual([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'reply to: Hello' },
        { role: 'user', content: 'Again' },
      ]);
      const [sent] = await upstreamBodies(up);
      expect(sent?.max_tokens).toBe(1024);
      expect(await used(s, id)).toBe(2);
    },
  );

  test.for(bothMemories('sdk-stream'))(
    'messages.stream gives the text as it comes and a final message with the usage%s',
    async ([, headers], { gateway: { s, id, key } }) => {
      const stream = anthropic(s, key, headers).messages.stream({
        ...hello,
        messages: [{ role: 'user', content: 'Tell me a story' }],
      });
      const pieces: string[] = [];
      stream.on('text', (text) => pieces.push(text));
      const final = await stream.finalMessage();
      expect(pieces.length).toBeGreaterThan(1);
      expect(pieces.join('')).toBe('reply to: Tell me a story');
      expect(final.content).toEqual([{ type: 'text', text: 'reply to: Tell me a story' }]);
      expect(final.stop_reason).toBe('end_turn');
      // The upstream's own counts (the fixture reports 7 prompt tokens and one per piece).
      expect(final.usage).toMatchObject({ input_tokens: 7, output_tokens: pieces.length });
      expect(await used(s, id)).toBe(1);
    },
  );

  test.for(bothMemories('sdk-tools'))(
    'a tool loop: tool_use, then the tool_result answered with text, each turn counted once%s',
    async ([name, headers], { gateway: { up, s, id, key } }) => {
      const client = anthropic(s, key, headers);
      const question = { role: 'user' as const, content: 'Weather in Berlin?' };
      const first = await client.messages.create({
        ...hello,
        tools: [weatherTool],
        tool_choice: { type: 'auto' },
        messages: [question],
      });
      expect(first.stop_reason).toBe('tool_use');
      const use = first.content.find((block) => block.type === 'tool_use');
      if (use?.type !== 'tool_use') throw new Error('expected a tool_use block');
      expect(use.name).toBe('get_weather');
      expect(use.input).toEqual({ city: 'Berlin' });
      expect(await used(s, id)).toBe(1);

      const result = {
        role: 'user' as const,
        content: [{ type: 'tool_result' as const, tool_use_id: use.id, content: '{"celsius":21}' }],
      };
      const earlier =
        name === '' ? [question, { role: 'assistant' as const, content: first.content }] : [];
      const second = await client.messages.create({
        ...hello,
        tools: [weatherTool],
        messages: [...earlier, result],
      });
      expect(second.content).toEqual([{ type: 'text', text: 'tool said: {"celsius":21}' }]);
      expect(second.stop_reason).toBe('end_turn');
      expect(await used(s, id)).toBe(2);

      const [sent1] = await upstreamBodies(up);
      expect(sent1?.tools).toEqual([
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'The weather in a city',
            parameters: weatherTool.input_schema,
          },
        },
      ]);
      expect(sent1?.tool_choice).toBe('auto');
      expect(await lastMessages(up)).toEqual([
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
        { role: 'tool', tool_call_id: use.id, content: '{"celsius":21}' },
      ]);
    },
  );

  test('messages.stream of a tool call: its input streamed as input_json_delta, stop_reason tool_use', async ({
    gateway: { s, id, key },
  }) => {
    const stream = anthropic(s, key).messages.stream({
      ...hello,
      tools: [weatherTool, { ...weatherTool, name: 'get_time' }],
      messages: [{ role: 'user', content: 'Weather and time in Berlin? all tools' }],
    });
    const json: string[] = [];
    stream.on('inputJson', (partial) => json.push(partial));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(
      final.content.map((block) => block.type === 'tool_use' && [block.name, block.input]),
    ).toEqual([
      ['get_weather', { city: 'Berlin' }],
      ['get_time', { city: 'Berlin' }],
    ]);
    // Each call's arguments came in two pieces.
    expect(json).toHaveLength(4);
    expect(await used(s, id)).toBe(1);
  });

  test('messages.countTokens estimates the input, counting nothing and asking no upstream', async ({
    gateway: { up, s, id, key },
  }) => {
    const counted = await anthropic(s, key).messages.countTokens({
      model: 'plauder-en',
      system: 'Be brief.',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Weather in Berlin, please?' }],
    });
    const short = await anthropic(s, key).messages.countTokens({
      model: 'plauder-en',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    expect(short.input_tokens).toBe(1);
    expect(counted.input_tokens).toBeGreaterThan(short.input_tokens + 10);
    expect(await used(s, id)).toBe(0);
    expect((await up.received()).requests).toHaveLength(0);
  });

  test('raises RateLimitError at once for a used-up month: one request, x-should-retry false', async ({
    server,
  }) => {
    const s = await server();
    const { key } = await s.createKey({ plan: 'tiny' });
    const client = anthropic(s, key);
    const ask = () =>
      client.messages.create({ ...hello, messages: [{ role: 'user', content: 'Hello' }] });
    await ask();
    const before = messageRequests(s);
    const error = await caught(ask());
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect(error.type).toBe('rate_limit_error');
    expect(error.errorCode).toBe('quota_exceeded');
    expect(Number(error.headers?.get('retry-after'))).toBeGreaterThan(60);
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(messageRequests(s) - before).toBe(1);
  });

  test('raises AuthenticationError for an invalid key, once', async ({ server }) => {
    const s = await server();
    const error = await caught(
      anthropic(s, 'plauder_wrong').messages.create({
        ...hello,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(error).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(error.type).toBe('authentication_error');
    expect(messageRequests(s)).toBe(1);
  });

  test('raises PermissionDeniedError for an inactive plan, BadRequestError for a bad body, NotFoundError for another model', async ({
    server,
  }) => {
    const s = await server();
    const { key: inactive } = await s.createKey({ active: false });
    const { key } = await s.createKey();
    const denied = await caught(
      anthropic(s, inactive).messages.create({
        ...hello,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(denied).toBeInstanceOf(Anthropic.PermissionDeniedError);
    const bad = await caught(
      anthropic(s, key).messages.create({
        ...hello,
        max_tokens: 0,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect(bad.apiMessage).toMatch(/^max_tokens: /);
    const missing = await caught(
      anthropic(s, key).messages.create({
        ...hello,
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError);
    expect(missing.type).toBe('not_found_error');
    expect(messageRequests(s)).toBe(3);
  });

  test('lists the models in Anthropic shape; /v1/models without anthropic-version stays OpenAI shape', async ({
    server,
  }) => {
    const s = await server();
    const { key } = await s.createKey();
    const page = await anthropic(s, key).models.list();
    expect(page.data.map((model) => [model.type, model.id])).toEqual([
      ['model', 'plauder-de'],
      ['model', 'plauder-en'],
    ]);
    expect((await anthropic(s, key).models.retrieve('plauder-en')).display_name).toBe(
      'plauder (English)',
    );
    const openAiShape = await http(`${s.url}/v1/models`, { key });
    expect(openAiShape.json.object).toBe('list');
    const refused = await caught(anthropic(s, 'plauder_wrong').models.list());
    expect(refused).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(refused.type).toBe('authentication_error');
  });
});

const weatherSchema = z.object({ city: z.string() });

describe('@ai-sdk/anthropic', () => {
  /** As a user makes it: only the base URL (Anthropic's ends in /v1) and the key are ours. */
  const provider = (s: TestServer, key: string, headers: Record<string, string> = {}) =>
    createAnthropic({ baseURL: `${s.url}/v1`, apiKey: key, headers });

  test.for(bothMemories('vercel-a1'))(
    'generateText with a tool runs the agent loop to a text answer%s',
    async ([, headers], { gateway: { up, s, id, key } }) => {
      const result = await generateText({
        model: provider(s, key, headers)('plauder-en'),
        prompt: 'Weather in Berlin?',
        tools: {
          get_weather: tool({
            description: 'The weather in a city',
            inputSchema: weatherSchema,
            execute: async ({ city }) => ({ city, celsius: 21 }),
          }),
        },
        stopWhen: stepCountIs(3),
      });
      expect(result.text).toBe('tool said: {"city":"Berlin","celsius":21}');
      expect(result.steps).toHaveLength(2);
      expect(result.steps[0]?.finishReason).toBe('tool-calls');
      expect(result.usage.inputTokens).toBeGreaterThan(0);
      expect(await used(s, id)).toBe(2);
      const [sent] = await upstreamBodies(up);
      const tools = (sent?.tools ?? []) as Array<{ function: { name: string } }>;
      expect(tools.map((t) => t.function.name)).toEqual(['get_weather']);
    },
  );

  test.for(bothMemories('vercel-a2'))(
    'streamText with a tool streams the tool call and the answer%s',
    async ([, headers], { gateway: { s, id, key } }) => {
      const result = streamText({
        model: provider(s, key, headers)('plauder-en'),
        prompt: 'Weather in Berlin?',
        tools: {
          get_weather: tool({
            inputSchema: weatherSchema,
            execute: async ({ city }) => `${city}: sunny`,
          }),
        },
        stopWhen: stepCountIs(3),
      });
      const kinds = new Set<string>();
      for await (const part of result.fullStream) kinds.add(part.type);
      expect(kinds).toContain('tool-call');
      expect(kinds).toContain('tool-result');
      expect(kinds).toContain('text-delta');
      expect(await result.text).toBe('tool said: Berlin: sunny');
      expect(await used(s, id)).toBe(2);
    },
  );
});

describe('the built-in core: text in, text out', () => {
  test('answers plain and streamed with the SDK', async ({ server }) => {
    const s = await server();
    const { id, key } = await s.createKey();
    const client = anthropic(s, key);
    const plain = await client.messages.create({
      ...hello,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    const text = plain.content[0];
    expect(text?.type === 'text' && text.text.length).toBeGreaterThan(0);
    expect(plain.stop_reason).toBe('end_turn');
    const final = await client.messages
      .stream({
        model: 'plauder-de',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Hallo' }],
      })
      .finalMessage();
    expect(final.content[0]?.type).toBe('text');
    expect(await used(s, id)).toBe(2);
  });

  test.for<[string, Partial<Anthropic.MessageCreateParamsNonStreaming>, string]>([
    ['tools', { tools: [weatherTool] }, 'tools'],
    ['tool_choice', { tool_choice: { type: 'auto' } }, 'tool_choice'],
    [
      'an image block',
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'image', source: { type: 'url', url: 'https://example.org/a.png' } }],
          },
        ],
      },
      'messages.0.content.0',
    ],
  ])(
    'refuses %s by name (400), before anything is counted',
    async ([, extra, param], { server }) => {
      const s = await server();
      const { id, key } = await s.createKey();
      const error = await caught(
        anthropic(s, key).messages.create({
          ...hello,
          messages: [{ role: 'user', content: 'Hi' }],
          ...extra,
        }),
      );
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect(error.apiMessage).toContain(param);
      expect(error.apiMessage).toContain('builtin core');
      expect(error.headers?.get('x-should-retry')).toBe('false');
      expect(messageRequests(s)).toBe(1);
      expect(await used(s, id)).toBe(0);
    },
  );
});

describe('failures of the door in Anthropic shape', () => {
  test.for<
    [string, (s: TestServer, key: string) => Promise<{ status: number; json: any }>, number, string]
  >([
    [
      'malformed JSON',
      (s, key) =>
        http(`${s.url}/v1/messages`, {
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          raw: '{"model":',
        }),
      400,
      'invalid_request_error',
    ],
    [
      'a body past the limit',
      (s, key) =>
        http(`${s.url}/v1/messages`, {
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          raw: JSON.stringify({
            ...hello,
            messages: [{ role: 'user', content: 'a'.repeat(4_200_000) }],
          }),
        }),
      413,
      'request_too_large',
    ],
    ['no key', (s) => http(`${s.url}/v1/messages`, { body: hello }), 401, 'authentication_error'],
    [
      'an unknown path',
      (s, key) => http(`${s.url}/v1/messages/batches`, { headers: { 'x-api-key': key }, body: {} }),
      404,
      'not_found_error',
    ],
  ])('%s', async ([, send, status, type], { server }) => {
    const s = await server();
    const { key } = await s.createKey();
    const answer = await send(s, key);
    expect(answer.status).toBe(status);
    expect(answer.json).toMatchObject({
      type: 'error',
      error: { type, message: expect.any(String) },
    });
  });
});
