/**
 * `/v1` as agents use it (docs/contract.md, "OpenAI-compatible door"): the official `openai`
 * client, the Vercel AI SDK and LangChain JS, each on its default settings (retries
 * included), against a real plauder server with the `openai` core in front of a real
 * upstream process that calls tools and answers in JSON (test/fixtures/openai-upstream.mjs).
 * Tools, structured output and image parts pass through; cores that cannot honour them
 * refuse them by name; answers a retry cannot fix end the client's retries.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { tool as langchainTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import type { Upstream } from '../core/openai/upstream-process.js';
import { test as base, openAiEnv, rasaEnv } from '../helpers/fixtures.js';
import { http, type TestServer } from '../helpers/test-server.js';

const test = base
  /**
   * A plauder server, closed after the test; with an upstream, its core is `openai` in front
   * of it, on the retry count the service ships with (the clients keep theirs too).
   */
  .extend(
    'server',
    async ({ serve }) =>
      (up?: Upstream, env: Record<string, string> = {}): Promise<TestServer> =>
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
            ...env,
          },
        }),
  )
  /** A server with the `openai` core in front of the (reset) upstream, and a key of it. */
  .extend('gateway', async ({ server, upstream }) => async (env: Record<string, string> = {}) => {
    const s = await server(upstream, env);
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
const openai = (s: TestServer, key: string, headers: Record<string, string> = {}) =>
  new OpenAI({ baseURL: `${s.url}/v1`, apiKey: key, defaultHeaders: headers });

/** How many requests plauder answered on `/v1/chat/completions` (every attempt of a client). */
const completionRequests = (s: TestServer) =>
  s.logs.filter((line) => line.includes('"route":"/v1/chat/completions"')).length;

async function caught(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an APIError: ${error}`);
  return error;
}

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
  },
};

/** The chat requests the upstream received, as their bodies. */
async function upstreamBodies(up: Upstream): Promise<Record<string, unknown>[]> {
  const { requests } = await up.received();
  return requests.map((request) => request.body as Record<string, unknown>);
}

describe('retries that end (openai client, default settings)', () => {
  test('raises RateLimitError at once for a used-up month: one request, x-should-retry false', async ({
    server,
  }) => {
    const s = await server();
    const { key } = await s.createKey({ plan: 'tiny' });
    const client = openai(s, key);
    const ask = () =>
      client.chat.completions.create({
        model: 'plauder-en',
        messages: [{ role: 'user', content: 'Hello' }],
      });
    await ask();
    const before = completionRequests(s);
    const error = await caught(ask());
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.code).toBe('quota_exceeded');
    expect(Number(error.headers?.get('retry-after'))).toBeGreaterThan(60);
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(completionRequests(s) - before).toBe(1);
  });

  test('costs an upstream that keeps failing plauder own attempts only, not client x plauder', async ({
    upstream: up,
    server,
  }) => {
    const s = await server(up, { PLAUDER_OPENAI_MAX_RETRIES: '2' });
    const failing = { status: 503, body: { error: { message: 'overloaded' } } };
    await up.script(...Array.from({ length: 12 }, () => failing));
    const { id, key } = await s.createKey();
    const error = await caught(
      openai(s, key).chat.completions.create({
        model: 'plauder-en',
        messages: [{ role: 'user', content: 'Hello' }],
      }),
    );
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect((await up.received()).requests).toHaveLength(3);
    expect(completionRequests(s)).toBe(1);
    expect(await used(s, id)).toBe(0);
  });

  test.for<[string, (s: TestServer) => Promise<{ key: string; body: object }>]>([
    ['a bad key (401)', async (_s: TestServer) => ({ key: 'plauder_wrong', body: {} })],
    [
      'an inactive plan (403)',
      async (s: TestServer) => ({ key: (await s.createKey({ active: false })).key, body: {} }),
    ],
    [
      'a bad body (400)',
      async (s: TestServer) => ({ key: (await s.createKey()).key, body: { temperature: 9 } }),
    ],
  ])('does not retry %s', async ([, setup], { server }) => {
    const s = await server();
    const { key, body } = await setup(s);
    const error = await caught(
      openai(s, key).chat.completions.create({
        model: 'plauder-en',
        messages: [{ role: 'user', content: 'Hello' }],
        ...body,
      }),
    );
    expect(error.status).toBeGreaterThanOrEqual(400);
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(completionRequests(s)).toBe(1);
  });

  test('lets the per-minute limit be retried: Retry-After within the minute, no x-should-retry', async ({
    server,
  }) => {
    const s = await server(undefined, { PLAUDER_PLANS: 'minute=1000/month+1/minute' });
    const { key } = await s.createKey({ plan: 'minute' });
    const body = { model: 'plauder-en', messages: [{ role: 'user', content: 'Hi' }] };
    await http(`${s.url}/v1/chat/completions`, { key, body });
    const refused = await http(`${s.url}/v1/chat/completions`, { key, body });
    expect(refused.status, JSON.stringify(refused.json)).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-should-retry')).toBeNull();
  });
});

describe('tools through an LLM core (openai client)', () => {
  test('passes tools through and answers with the tool calls; the result turn counts once more', async ({
    gateway,
  }) => {
    const { up, s, id, key } = await gateway();
    const client = openai(s, key);
    const first = await client.chat.completions.create({
      model: 'plauder-en',
      messages: [{ role: 'user', content: 'Weather in Berlin?' }],
      tools: [weatherTool],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    const call = choice?.message.tool_calls?.[0];
    if (call?.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Berlin' });
    expect(await used(s, id)).toBe(1);

    const second = await client.chat.completions.create({
      model: 'plauder-en',
      messages: [
        { role: 'user', content: 'Weather in Berlin?' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '{"celsius":21}' },
      ],
      tools: [weatherTool],
    });
    expect(second.choices[0]?.message.content).toBe('tool said: {"celsius":21}');
    expect(second.choices[0]?.finish_reason).toBe('stop');
    expect(await used(s, id)).toBe(2);

    const [sent1, sent2] = await upstreamBodies(up);
    expect(sent1?.tools).toEqual([weatherTool]);
    expect(sent1?.tool_choice).toBe('auto');
    expect(sent1?.parallel_tool_calls).toBe(false);
    // The agent's messages reach the upstream unchanged, after the operator's prompt.
    expect((sent2?.messages as unknown[] | undefined)?.slice(1)).toEqual([
      { role: 'user', content: 'Weather in Berlin?' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: '{"celsius":21}' },
    ]);
  });

  test('relays streamed tool-call deltas as OpenAI sends them, counted once', async ({
    gateway,
  }) => {
    const { s, id, key } = await gateway();
    const stream = await openai(s, key).chat.completions.create({
      model: 'plauder-en',
      messages: [{ role: 'user', content: 'Weather in Berlin and Paris? all tools' }],
      tools: [
        weatherTool,
        { ...weatherTool, function: { ...weatherTool.function, name: 'get_time' } },
      ],
      stream: true,
    });
    const deltas: unknown[] = [];
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      deltas.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('tool_calls');
    // Two calls: the id and name first, then the arguments in pieces, by index.
    expect(deltas).toHaveLength(6);
    expect(deltas[0]).toMatchObject({
      index: 0,
      id: expect.any(String),
      function: { name: 'get_weather' },
    });
    expect(deltas[3]).toMatchObject({ index: 1, function: { name: 'get_time' } });
    const args = deltas
      .filter((d) => (d as { index: number }).index === 0)
      .map((d) => (d as { function: { arguments?: string } }).function.arguments ?? '')
      .join('');
    expect(JSON.parse(args)).toEqual({ city: 'Berlin' });
    expect(await used(s, id)).toBe(1);
  });

  test('keeps tool calls and results in the session, so the agent sends only the tool results', async ({
    gateway,
  }) => {
    const { up, s, id, key } = await gateway();
    const client = openai(s, key, { 'X-Session-Id': 'agent-1' });
    const first = await client.chat.completions.create({
      model: 'plauder-en',
      messages: [{ role: 'user', content: 'Weather in Berlin?' }],
      tools: [weatherTool],
    });
    const call = first.choices[0]?.message.tool_calls?.[0];
    if (call?.type !== 'function') throw new Error('expected a function call');
    const second = await client.chat.completions.create({
      model: 'plauder-en',
      messages: [{ role: 'tool', tool_call_id: call.id, content: 'sunny' }],
      tools: [weatherTool],
    });
    expect(second.choices[0]?.message.content).toBe('tool said: sunny');
    const sent = (await upstreamBodies(up)).at(-1);
    expect((sent?.messages as unknown[] | undefined)?.slice(1)).toEqual([
      { role: 'user', content: 'Weather in Berlin?' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: call.id, content: 'sunny' },
    ]);
    // /api/chat continues the same session and sees its text; the upstream its messages.
    const text = await http(`${s.url}/api/chat-en`, {
      key,
      body: { message: 'Thanks', sessionId: 'agent-1' },
    });
    expect(text.json, JSON.stringify(text.json)).toEqual({ reply: 'reply to: Thanks' });
    const turns = await s.services.sessions.read(id, 'agent-1', Date.now());
    expect(turns?.map((t) => [t.message, t.reply])).toEqual([
      ['Weather in Berlin?', ''],
      ['sunny', 'tool said: sunny'],
      ['Thanks', 'reply to: Thanks'],
    ]);
    const stored = await http(`${s.url}/api/sessions/agent-1`, { key });
    expect(stored.status).toBe(200);
    expect(stored.text).not.toContain('tool_calls');
    expect(stored.json.turns.map((t: { reply: string }) => t.reply)).toEqual([
      '',
      'tool said: sunny',
      'reply to: Thanks',
    ]);
    expect(await used(s, id)).toBe(3);
  });

  test('passes image parts through unchanged', async ({ upstream: up, server }) => {
    const s = await server(up);
    const { key } = await s.createKey();
    const content = [
      { type: 'text' as const, text: 'What is in it?' },
      { type: 'image_url' as const, image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ];
    const answer = await openai(s, key).chat.completions.create({
      model: 'plauder-en',
      messages: [{ role: 'user', content }],
    });
    expect(answer.choices[0]?.message.content).toBe('reply to: What is in it? [image_url]');
    const sent = (await upstreamBodies(up)).at(-1);
    expect((sent?.messages as unknown[] | undefined)?.at(-1)).toEqual({ role: 'user', content });
  });
});

describe('the body limit of /v1/chat/completions', () => {
  test('takes an image larger than /api/chat bodies, refuses one past PLAUDER_COMPLETION_BODY_LIMIT', async ({
    upstream: up,
    server,
  }) => {
    const s = await server(up, { PLAUDER_COMPLETION_BODY_LIMIT: '1048576' });
    const { id, key } = await s.createKey();
    const image = (bytes: number) => ({
      model: 'plauder-en',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in it?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${'A'.repeat(bytes)}` } },
          ],
        },
      ],
    });
    const fits = await http(`${s.url}/v1/chat/completions`, { key, body: image(512 * 1024) });
    expect(fits.status).toBe(200);
    const tooLarge = await http(`${s.url}/v1/chat/completions`, { key, body: image(1_100_000) });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.json.error.code).toBe('payload_too_large');
    // A large body without a valid key is refused for the key.
    const keyless = await http(`${s.url}/v1/chat/completions`, {
      key: 'plauder_wrong',
      body: image(512 * 1024),
    });
    expect(keyless.status).toBe(401);
    expect(await used(s, id)).toBe(1);
  });
});

describe('structured output through an LLM core (openai client)', () => {
  const schema = {
    type: 'json_schema' as const,
    json_schema: {
      name: 'city',
      strict: true,
      schema: {
        type: 'object',
        properties: { name: { type: 'string' }, people: { type: 'integer' } },
        required: ['name', 'people'],
        additionalProperties: false,
      },
    },
  };

  test.for(bothMemories('json-1'))(
    'passes json_schema with strict to the upstream, plain and streamed%s',
    async ([_name, headers], { upstream: up, server }) => {
      const s = await server(up);
      const { id, key } = await s.createKey();
      const client = openai(s, key, headers);
      const messages = [{ role: 'user' as const, content: 'A city' }];
      const plain = await client.chat.completions.create({
        model: 'plauder-en',
        messages,
        response_format: schema,
      });
      expect(JSON.parse(plain.choices[0]?.message.content ?? '')).toEqual({
        name: 'Berlin',
        people: 2,
      });
      const stream = await client.chat.completions.create({
        model: 'plauder-en',
        messages,
        response_format: { type: 'json_object' },
        stream: true,
      });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      expect(JSON.parse(text)).toEqual({ reply: 'reply to: A city' });
      const [sent1, sent2] = await upstreamBodies(up);
      expect(sent1?.response_format).toEqual(schema);
      expect(sent2?.response_format).toEqual({ type: 'json_object' });
      expect(await used(s, id)).toBe(2);
    },
  );
});

describe('passed-through parts are checked for their shape before the upstream sees them', () => {
  test.for<[string, object, string]>([
    ['a tool without a function name', { tools: [{ type: 'function' }] }, 'tools'],
    ['an empty tools list', { tools: [] }, 'tools'],
    ['an unknown tool_choice', { tool_choice: 'bogus' }, 'tool_choice'],
    [
      'a json_schema without a name',
      { response_format: { type: 'json_schema', json_schema: { schema: {} } } },
      'response_format.json_schema',
    ],
    ['an unknown response_format', { response_format: { type: 'bogus' } }, 'response_format'],
  ])(
    '400 naming the parameter for %s, the upstream not asked',
    async ([_name, extra, param], { gateway }) => {
      const { up, s, id, key } = await gateway();
      const body = { model: 'plauder-en', messages: [{ role: 'user', content: 'Hi' }], ...extra };
      const error = await caught(
        openai(s, key).chat.completions.create(
          body as OpenAI.ChatCompletionCreateParamsNonStreaming,
        ),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.param).toBe(param);
      expect((await up.received()).requests).toHaveLength(0);
      expect(await used(s, id)).toBe(0);
    },
  );

  test('400 naming tools for a tool schema nested 10 000 levels deep, not a 500', async ({
    gateway,
  }) => {
    const { up, s, id, key } = await gateway();
    const schema = `${'{"type":"object","properties":{"a":'.repeat(10_000)}{}${'}}'.repeat(10_000)}`;
    const raw = `{"model":"plauder-en","messages":[{"role":"user","content":"Hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]}`;
    const res = await http(`${s.url}/v1/chat/completions`, {
      key,
      headers: { 'content-type': 'application/json' },
      raw,
    });
    expect(res.status).toBe(400);
    expect(res.json.error.param).toBe('tools');
    expect((await up.received()).requests).toHaveLength(0);
    expect(await used(s, id)).toBe(0);
  });
});

describe('cores that cannot honour them refuse by name, before anything is counted', () => {
  test.for<[string, object, string]>([
    ['tools', { tools: [weatherTool] }, 'tools'],
    ['tool_choice', { tool_choice: 'auto' }, 'tool_choice'],
    ['parallel_tool_calls', { parallel_tool_calls: true }, 'parallel_tool_calls'],
    ['json_object', { response_format: { type: 'json_object' } }, 'response_format'],
    [
      'json_schema',
      { response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } } },
      'response_format',
    ],
    [
      'an image part',
      {
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/a.png' } }] },
        ],
      },
      'messages[0].content[0]',
    ],
  ])('the built-in core: 400 naming %s', async ([_name, extra, param], { server }) => {
    const s = await server();
    const { id, key } = await s.createKey();
    const body = { model: 'plauder-en', messages: [{ role: 'user', content: 'Hi' }], ...extra };
    const error = await caught(
      openai(s, key).chat.completions.create(body as OpenAI.ChatCompletionCreateParamsNonStreaming),
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.param).toBe(param);
    expect(error.message).toContain('builtin core');
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(completionRequests(s)).toBe(1);
    expect(await used(s, id)).toBe(0);
  });

  test.for<[string, object]>([
    ['response_format', { response_format: { type: 'json_object' } }],
    ['tools', { tools: [weatherTool] }],
  ])(
    'the rasa core: 400 naming %s, and the bot is not asked',
    async ([param, extra], { server, rasaBot: bot }) => {
      const s = await server(undefined, rasaEnv(bot));
      const { id, key } = await s.createKey();
      const body = { model: 'plauder-en', messages: [{ role: 'user', content: 'Hi' }], ...extra };
      const error = await caught(
        openai(s, key).chat.completions.create(
          body as OpenAI.ChatCompletionCreateParamsNonStreaming,
        ),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.param).toBe(param);
      expect(error.message).toContain('rasa core');
      expect(await bot.requests()).toHaveLength(0);
      expect(await used(s, id)).toBe(0);
    },
  );

  test('accepts response_format text on the built-in core (what it does anyway)', async ({
    server,
  }) => {
    const s = await server();
    const { key } = await s.createKey();
    const answer = await openai(s, key).chat.completions.create({
      model: 'plauder-en',
      messages: [{ role: 'user', content: 'Hello' }],
      response_format: { type: 'text' },
    });
    expect(answer.choices[0]?.message.content?.length).toBeGreaterThan(0);
  });
});

const weatherSchema = z.object({ city: z.string() });

describe('the Vercel AI SDK', () => {
  const provider = (s: TestServer, key: string, headers: Record<string, string> = {}) =>
    createOpenAICompatible({
      name: 'plauder',
      baseURL: `${s.url}/v1`,
      apiKey: key,
      headers,
      supportsStructuredOutputs: true,
    });

  test.for(bothMemories('vercel-1'))(
    'generateText with tools runs the agent loop to a text answer%s',
    async ([_name, headers], { gateway }) => {
      const { s, id, key } = await gateway();
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
      expect(await used(s, id)).toBe(2);
    },
  );

  test.for(bothMemories('vercel-2'))(
    'streamText with tools streams the tool call and the answer%s',
    async ([_name, headers], { gateway }) => {
      const { s, id, key } = await gateway();
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
      expect(await result.text).toBe('tool said: Berlin: sunny');
      expect(await used(s, id)).toBe(2);
    },
  );

  test.for(bothMemories('vercel-3'))(
    'generateObject gets an object that fits the schema%s',
    async ([_name, headers], { gateway }) => {
      const { s, id, key } = await gateway();
      const { object } = await generateObject({
        model: provider(s, key, headers)('plauder-en'),
        schema: z.object({ name: z.string(), people: z.number() }),
        prompt: 'A city',
      });
      expect(object).toEqual({ name: 'Berlin', people: 2 });
      expect(await used(s, id)).toBe(1);
    },
  );
});

describe('LangChain JS', () => {
  const chat = (s: TestServer, key: string, headers: Record<string, string> = {}) =>
    new ChatOpenAI({
      model: 'plauder-en',
      apiKey: key,
      configuration: { baseURL: `${s.url}/v1`, defaultHeaders: headers },
    });

  test.for(bothMemories('lc-1'))(
    'bindTools: an agent loop calls the tool and answers%s',
    async ([_name, headers], { gateway }) => {
      const { s, id, key } = await gateway();
      const getWeather = langchainTool(
        async ({ city }: { city: string }) => `${city}: 21 degrees`,
        {
          name: 'get_weather',
          description: 'The weather in a city',
          schema: weatherSchema,
        },
      );
      const model = chat(s, key, headers).bindTools([getWeather]);
      const messages: Parameters<typeof model.invoke>[0] = [['user', 'Weather in Berlin?']];
      const first = await model.invoke(messages);
      expect(first.tool_calls?.[0]).toMatchObject({
        name: 'get_weather',
        args: { city: 'Berlin' },
      });
      const results = await Promise.all(
        (first.tool_calls ?? []).map((call) => getWeather.invoke(call)),
      );
      const second = await model.invoke([...(messages as never[]), first, ...results]);
      expect(second.content).toBe('tool said: Berlin: 21 degrees');
      expect(await used(s, id)).toBe(2);
    },
  );

  test.for(bothMemories('lc-2'))(
    'withStructuredOutput returns the parsed object%s',
    async ([_name, headers], { gateway }) => {
      const { s, id, key } = await gateway();
      const structured = chat(s, key, headers).withStructuredOutput(
        z.object({ name: z.string(), people: z.number() }),
      );
      expect(await structured.invoke('A city')).toEqual({ name: 'Berlin', people: 2 });
      expect(await used(s, id)).toBe(1);
    },
  );

  test.for(bothMemories('lc-3'))(
    'stream yields the reply in pieces%s',
    async ([_name, headers], { gateway }) => {
      const { s, id, key } = await gateway();
      let text = '';
      let pieces = 0;
      for await (const chunk of await chat(s, key, headers).stream('Hello there')) {
        if (typeof chunk.content === 'string' && chunk.content !== '') pieces++;
        text += typeof chunk.content === 'string' ? chunk.content : '';
      }
      expect(text).toBe('reply to: Hello there');
      expect(pieces).toBeGreaterThan(1);
      expect(await used(s, id)).toBe(1);
    },
  );
});
