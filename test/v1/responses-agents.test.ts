/**
 * The agent frameworks that speak OpenAI's Responses API by default, on their default
 * settings, against a real plauder server with the `openai` core in front of the real
 * upstream process (test/fixtures/openai-upstream.mjs, which calls tools and answers in
 * JSON): the OpenAI Agents SDK (`run()` with a tool, a streamed run, a handoff between two
 * agents) and the Vercel AI SDK's `@ai-sdk/openai` default model (`generateText` with tools,
 * `streamText`, `generateObject`), each also with server-side memory
 * (`previous_response_id`). docs/contract.md, "Responses API".
 */
import { createOpenAI } from '@ai-sdk/openai';
import {
  Agent,
  tool as agentTool,
  handoff,
  OpenAIProvider,
  Runner,
  setTracingDisabled,
} from '@openai/agents';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { describe, expect } from 'vitest';
import { z } from 'zod';
import { test as base, openAiEnv } from '../helpers/fixtures.js';
import type { TestServer } from '../helpers/test-server.js';

// The Agents SDK sends traces, with the key, to OpenAI unless told not to (docs/openai.md).
setTracingDisabled(true);

const test = base.extend('gateway', async ({ serve, upstream }) => async () => {
  const s = await serve({
    env: { PLAUDER_PLANS: 'standard=1000', ...openAiEnv(upstream, {}, { retries: 'shipped' }) },
  });
  const { id, key } = await s.createKey();
  return { up: upstream, s, id, key };
});

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

/** How many requests plauder answered on `/v1/responses`. */
const responseRequests = (s: TestServer) =>
  s.logs.filter((line) => line.includes('"route":"/v1/responses"')).length;

/** The Agents SDK pointed at plauder: only the base URL and the key are ours. */
const runner = (s: TestServer, key: string) =>
  new Runner({
    modelProvider: new OpenAIProvider({ baseURL: `${s.url}/v1`, apiKey: key }),
    tracingDisabled: true,
  });

const weatherTool = () =>
  agentTool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => `sunny in ${city}`,
  });

describe('the OpenAI Agents SDK on its defaults', () => {
  test('run() calls a tool and answers with its result, through /v1/responses', async ({
    gateway,
  }) => {
    const { s, id, key } = await gateway();
    const agent = new Agent({
      name: 'Weather agent',
      instructions: 'Answer about the weather.',
      model: 'plauder-en',
      tools: [weatherTool()],
    });
    const result = await runner(s, key).run(agent, 'Weather in Berlin?');
    expect(result.finalOutput).toBe('tool said: sunny in Berlin');
    expect(responseRequests(s)).toBe(2);
    expect(await used(s, id)).toBe(2);
  });

  test('run() continues a conversation with previousResponseId (server-side memory)', async ({
    gateway,
  }) => {
    const { up, s, key } = await gateway();
    const agent = new Agent({ name: 'Assistant', model: 'plauder-en' });
    const first = await runner(s, key).run(agent, 'My name is Ann');
    expect(first.lastResponseId).toMatch(/^resp_/);
    const second = await runner(s, key).run(agent, 'What is my name?', {
      previousResponseId: first.lastResponseId,
    });
    expect(second.finalOutput).toBe('reply to: What is my name?');
    const last = (await up.received()).requests.at(-1)?.body as {
      messages: { content: unknown }[];
    };
    expect(last.messages.map((m) => m.content)).toEqual(
      expect.arrayContaining(['My name is Ann', 'reply to: My name is Ann', 'What is my name?']),
    );
  });

  test('streams a run: text deltas, then the final output', async ({ gateway }) => {
    const { s, key } = await gateway();
    const agent = new Agent({ name: 'Assistant', model: 'plauder-en' });
    const stream = await runner(s, key).run(agent, 'Tell me a story', { stream: true });
    let text = '';
    for await (const event of stream.toTextStream()) text += event;
    await stream.completed;
    expect(text).toBe('reply to: Tell me a story');
    expect(stream.finalOutput).toBe(text);
  });

  test('hands off from one agent to another', async ({ gateway }) => {
    const { s, key } = await gateway();
    const german = new Agent({
      name: 'German agent',
      instructions: 'Answer in German.',
      model: 'plauder-en',
    });
    const triage = new Agent({
      name: 'Triage agent',
      instructions: 'Hand German questions to the German agent.',
      model: 'plauder-en',
      handoffs: [handoff(german)],
    });
    const result = await runner(s, key).run(triage, 'Wie spät ist es?');
    expect(result.lastAgent?.name).toBe('German agent');
    expect(String(result.finalOutput)).toMatch(/^tool said: /);
  });
});

describe("the Vercel AI SDK's @ai-sdk/openai default model (Responses)", () => {
  const model = (s: TestServer, key: string) =>
    createOpenAI({ baseURL: `${s.url}/v1`, apiKey: key })('plauder-en');
  const weather = tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => `rain in ${city}`,
  });

  test('generateText runs a tools loop to its answer with stopWhen', async ({ gateway }) => {
    const { s, id, key } = await gateway();
    const result = await generateText({
      model: model(s, key),
      prompt: 'Weather in Berlin?',
      tools: { get_weather: weather },
      stopWhen: stepCountIs(3),
    });
    expect(result.steps[0]?.toolCalls[0]?.input).toEqual({ city: 'Berlin' });
    expect(result.text).toBe('tool said: rain in Berlin');
    expect(result.usage.totalTokens).toBeGreaterThan(0);
    expect(await used(s, id)).toBe(2);
  });

  test('generateText continues a kept response with previousResponseId', async ({ gateway }) => {
    const { up, s, key } = await gateway();
    const first = await generateText({ model: model(s, key), prompt: 'My name is Ann' });
    const responseId = first.providerMetadata?.openai?.responseId;
    expect(responseId).toMatch(/^resp_/);
    await generateText({
      model: model(s, key),
      prompt: 'What is my name?',
      providerOptions: { openai: { previousResponseId: String(responseId) } },
    });
    const last = (await up.received()).requests.at(-1)?.body as {
      messages: { content: unknown }[];
    };
    expect(last.messages.map((m) => m.content)).toEqual(
      expect.arrayContaining(['My name is Ann', 'reply to: My name is Ann']),
    );
  });

  test('streamText streams the text and a tools loop', async ({ gateway }) => {
    const { s, key } = await gateway();
    const plain = streamText({ model: model(s, key), prompt: 'Tell me a story' });
    let text = '';
    for await (const piece of plain.textStream) text += piece;
    expect(text).toBe('reply to: Tell me a story');
    const looped = streamText({
      model: model(s, key),
      prompt: 'Weather in Paris?',
      tools: { get_weather: weather },
      stopWhen: stepCountIs(3),
    });
    expect(await looped.text).toBe('tool said: rain in Berlin');
  });

  test('generateObject answers an object of the schema', async ({ gateway }) => {
    const { s, key } = await gateway();
    const { object } = await generateObject({
      model: model(s, key),
      schema: z.object({ name: z.string(), people: z.number() }),
      prompt: 'A city?',
    });
    expect(object).toEqual({ name: 'Berlin', people: 2 });
  });
});
