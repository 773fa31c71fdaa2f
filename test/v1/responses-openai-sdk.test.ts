/**
 * OpenAI's Responses API on plauder (docs/contract.md, "Responses API"), driven by the
 * official `openai` package on its default settings (retries included), pointed at a real
 * plauder server: with the `openai` core in front of the real upstream process (which calls
 * tools and answers in JSON, test/fixtures/openai-upstream.mjs), plain and streamed, text,
 * a tools loop and json_schema, each also with server-side memory (`previous_response_id`);
 * and with the built-in core: text in, text out, tools refused by name before anything is
 * counted. The storage of responses is tested on both dialects in responses-state.test.ts.
 */
import OpenAI from 'openai';
import { describe, expect } from 'vitest';
import { test as base, openAiEnv } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/test-server.js';

const test = base
  .extend(
    'server',
    async ({ serve }) =>
      (env: Record<string, string> = {}): Promise<TestServer> =>
        serve({ env: { PLAUDER_PLANS: 'standard=1000,tiny=1', ...env } }),
  )
  /** A server with the `openai` core in front of the (reset) upstream, and a key of it. */
  .extend('gateway', async ({ server, upstream }) => async () => {
    const s = await server(openAiEnv(upstream, {}, { retries: 'shipped' }));
    const { id, key } = await s.createKey();
    return { up: upstream, s, id, key, client: openai(s, key) };
  });

/** The official client exactly as a user makes it: only the base URL and the key are ours. */
const openai = (s: TestServer, key: string) => new OpenAI({ baseURL: `${s.url}/v1`, apiKey: key });

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

/** How many requests plauder answered on `/v1/responses` (every attempt of a client). */
const responseRequests = (s: TestServer) =>
  s.logs.filter((line) => line.includes('"route":"/v1/responses"')).length;

async function caught(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an APIError: ${error}`);
  return error;
}

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  strict: true,
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
};

/** The same test without and with server-side memory (`previous_response_id`). */
const bothMemories = [
  ['', false],
  [' with previous_response_id', true],
] as const;

describe('responses.create with the openai core', () => {
  test('answers a string input with a response object, usage and output_text, counted once', async ({
    gateway,
  }) => {
    const { up, s, id, client } = await gateway();
    const response = await client.responses.create({
      model: 'plauder-en',
      instructions: 'Be brief.',
      input: 'Hello there',
    });
    expect(response.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(response.object).toBe('response');
    expect(response.status).toBe('completed');
    expect(response.model).toBe('plauder-en');
    expect(response.output_text).toBe('reply to: Hello there');
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant' });
    expect(response.usage?.total_tokens).toBeGreaterThan(0);
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(0);
    expect(await used(s, id)).toBe(1);
    const [sent] = (await up.received()).requests;
    const messages = (sent?.body as { messages?: { role: string; content: unknown }[] })?.messages;
    expect(messages?.at(-2)).toEqual({ role: 'system', content: 'Be brief.' });
    expect(messages?.at(-1)).toEqual({ role: 'user', content: 'Hello there' });
  });

  for (const [name, memory] of bothMemories) {
    test(`runs a tools loop: a function_call, then its output answered${name}`, async ({
      gateway,
    }) => {
      const { s, id, client } = await gateway();
      const first = await client.responses.create({
        model: 'plauder-en',
        input: [{ role: 'user', content: 'Weather in Berlin?' }],
        tools: [weather],
      });
      const call = first.output.find((item) => item.type === 'function_call');
      if (call?.type !== 'function_call') throw new Error('expected a function call');
      expect(call.name).toBe('get_weather');
      expect(JSON.parse(call.arguments)).toEqual({ city: 'Berlin' });
      expect(call.id).toMatch(/^fc_/);
      const output = {
        type: 'function_call_output' as const,
        call_id: call.call_id,
        output: 'sunny',
      };
      const second = await client.responses.create(
        memory
          ? {
              model: 'plauder-en',
              previous_response_id: first.id,
              input: [output],
              tools: [weather],
            }
          : {
              model: 'plauder-en',
              input: [{ role: 'user', content: 'Weather in Berlin?' }, call, output],
              tools: [weather],
              store: false,
            },
      );
      expect(second.output_text).toBe('tool said: sunny');
      expect(await used(s, id)).toBe(2);
    });

    test(`answers json_schema with an object of the schema${name}`, async ({ gateway }) => {
      const { up, client } = await gateway();
      const format = {
        type: 'json_schema' as const,
        name: 'city',
        strict: true,
        schema: {
          type: 'object',
          properties: { name: { type: 'string' }, people: { type: 'number' } },
          required: ['name', 'people'],
          additionalProperties: false,
        },
      };
      const first = await client.responses.create({ model: 'plauder-en', input: 'A city?' });
      const response = await client.responses.parse({
        model: 'plauder-en',
        input: 'Another city?',
        text: { format },
        ...(memory ? { previous_response_id: first.id } : {}),
      });
      expect(response.output_parsed).toEqual({ name: 'Berlin', people: 2 });
      const last = (await up.received()).requests.at(-1)?.body as Record<string, any>;
      expect(last.response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'city', schema: format.schema, strict: true },
      });
      // With memory the core saw the first exchange before the new question.
      const texts = (last.messages as { content: unknown }[]).map((m) => m.content);
      expect(texts.includes('reply to: A city?')).toBe(memory);
    });
  }

  test('answers json_object mode with a JSON object', async ({ gateway }) => {
    const { client } = await gateway();
    const response = await client.responses.create({
      model: 'plauder-en',
      input: 'Answer in JSON',
      text: { format: { type: 'json_object' } },
    });
    expect(JSON.parse(response.output_text)).toEqual({ reply: expect.any(String) });
  });

  test('refuses hosted tools and background by name, 400, without counting', async ({
    gateway,
  }) => {
    const { s, id, client } = await gateway();
    const hosted = await caught(
      client.responses.create({
        model: 'plauder-en',
        input: 'Search',
        tools: [{ type: 'web_search' }],
      }),
    );
    expect(hosted).toBeInstanceOf(OpenAI.BadRequestError);
    expect(hosted.param).toBe('tools[0].type');
    const background = await caught(
      client.responses.create({ model: 'plauder-en', input: 'Later', background: true }),
    );
    expect(background.param).toBe('background');
    expect(await used(s, id)).toBe(0);
  });
});

describe('responses.stream with the openai core', () => {
  for (const [name, memory] of bothMemories) {
    test(`streams text deltas with one response id, then the final response${name}`, async ({
      gateway,
    }) => {
      const { s, id, client } = await gateway();
      const first = memory
        ? await client.responses.create({ model: 'plauder-en', input: 'My name is Ann' })
        : undefined;
      const stream = client.responses.stream({
        model: 'plauder-en',
        input: 'Tell me a story',
        ...(first ? { previous_response_id: first.id } : {}),
      });
      const types: string[] = [];
      const ids = new Set<string>();
      const sequence: number[] = [];
      let deltas = '';
      for await (const event of stream) {
        types.push(event.type);
        sequence.push(event.sequence_number);
        if ('response' in event) ids.add(event.response.id);
        if (event.type === 'response.output_text.delta') deltas += event.delta;
      }
      const final = await stream.finalResponse();
      expect(deltas).toBe('reply to: Tell me a story');
      expect(final.output_text).toBe(deltas);
      expect(final.usage?.output_tokens).toBeGreaterThan(0);
      expect(ids).toEqual(new Set([final.id]));
      expect(sequence).toEqual(sequence.map((_, i) => i));
      expect(types.slice(0, 4)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
      ]);
      expect(types.slice(-4)).toEqual([
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(await used(s, id)).toBe(memory ? 2 : 1);
    });

    test(`streams a function call's arguments, then the loop's answer${name}`, async ({
      gateway,
    }) => {
      const { client } = await gateway();
      const stream = client.responses.stream({
        model: 'plauder-en',
        input: 'Weather in Berlin?',
        tools: [weather],
      });
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      const first = await stream.finalResponse();
      const call = first.output.find((item) => item.type === 'function_call');
      if (call?.type !== 'function_call') throw new Error('expected a function call');
      expect(types).toContain('response.function_call_arguments.delta');
      expect(types).toContain('response.function_call_arguments.done');
      expect(JSON.parse(call.arguments)).toEqual({ city: 'Berlin' });
      const output = {
        type: 'function_call_output' as const,
        call_id: call.call_id,
        output: 'rain',
      };
      const next = client.responses.stream(
        memory
          ? {
              model: 'plauder-en',
              previous_response_id: first.id,
              input: [output],
              tools: [weather],
            }
          : {
              model: 'plauder-en',
              input: [{ role: 'user', content: 'Weather in Berlin?' }, call, output],
              tools: [weather],
            },
      );
      expect((await next.finalResponse()).output_text).toBe('tool said: rain');
    });
  }

  test('ends with response.failed when the core fails after the stream began', async ({
    gateway,
  }) => {
    const { up, client } = await gateway();
    await up.script({ content: 'one two three', stream: { breakAfter: 1 } });
    const stream = await client.responses.create({
      model: 'plauder-en',
      input: 'Hello',
      stream: true,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toContain('response.output_text.delta');
    expect(types.at(-1)).toBe('response.failed');
  });
});

describe('retries that end (openai client, default settings)', () => {
  test('raises RateLimitError at once for a used-up month: one request, x-should-retry false', async ({
    server,
  }) => {
    const s = await server();
    const { key } = await s.createKey({ plan: 'tiny' });
    const client = openai(s, key);
    await client.responses.create({ model: 'plauder-en', input: 'Hello' });
    const before = responseRequests(s);
    const error = await caught(client.responses.create({ model: 'plauder-en', input: 'Again' }));
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.code).toBe('quota_exceeded');
    expect(error.headers?.get('x-should-retry')).toBe('false');
    expect(responseRequests(s) - before).toBe(1);
  });
});

describe('the built-in core', () => {
  test('answers text in, text out, in the language of the model', async ({ server }) => {
    const s = await server();
    const { id, key } = await s.createKey();
    const response = await openai(s, key).responses.create({
      model: 'plauder-en',
      input: 'What does plauder cost?',
    });
    expect(response.status).toBe('completed');
    expect(response.output_text.length).toBeGreaterThan(0);
    expect(await used(s, id)).toBe(1);
    const streamed = openai(s, key).responses.stream({ model: 'plauder-de', input: 'Hallo' });
    expect((await streamed.finalResponse()).output_text.length).toBeGreaterThan(0);
  });

  test('refuses tools and text.format by name, 400, before anything is counted', async ({
    server,
  }) => {
    const s = await server();
    const { id, key } = await s.createKey();
    const client = openai(s, key);
    const tools = await caught(
      client.responses.create({ model: 'plauder-en', input: 'Weather?', tools: [weather] }),
    );
    expect(tools).toBeInstanceOf(OpenAI.BadRequestError);
    expect(tools.param).toBe('tools');
    expect(tools.message).toContain('builtin core');
    const format = await caught(
      client.responses.create({
        model: 'plauder-en',
        input: 'JSON?',
        text: { format: { type: 'json_object' } },
      }),
    );
    expect(format.param).toBe('text.format');
    expect(await used(s, id)).toBe(0);
  });
});
