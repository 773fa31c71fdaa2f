/**
 * How a streamed turn ends, through both doors that stream (docs/contract.md, "Streamed
 * replies", "OpenAI-compatible door"): the raw bytes after the last delta, for a reply
 * (`done`, or the finish, usage and `[DONE]` chunks, with a tool-call finish reason), for a
 * core failure after the first delta (the door's error event, nothing after it) and for a
 * kept reply replayed as a stream.
 */
import { describe, expect } from 'vitest';
import { test as base, openAiEnv } from '../helpers/fixtures.js';
import { readSse, type SseAnswer } from '../helpers/sse.js';
import type { TestServer } from '../helpers/test-server.js';

/** A server with the OpenAI core in front of the worker's upstream, and a key of it. */
const test = base.extend('served', async ({ serve, upstream }) => {
  const s = await serve({ env: openAiEnv(upstream) });
  const { key } = await s.createKey();
  return { s, up: upstream, key };
});

async function post(
  s: TestServer,
  key: string,
  path: string,
  body: object,
  headers: Record<string, string> = {},
): Promise<SseAnswer> {
  const response = await fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
  return readSse(response);
}

const UNAVAILABLE = 'The conversational core is unavailable. Please try again later.';
const data = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const event = (name: string, value: unknown) => `event: ${name}\n${data(value)}`;

/** The head every chunk of this answer repeats, read from its first (role) chunk. */
function chunkHead(answer: SseAnswer) {
  const { id, created } = JSON.parse(answer.events[0]?.data ?? '{}');
  return { id, object: 'chat.completion.chunk', created, model: 'plauder-en' };
}

const finishChunk = (answer: SseAnswer, reason: string) => ({
  ...chunkHead(answer),
  choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: reason }],
  usage: null,
});

const contentChunk = (answer: SseAnswer, content: string) => ({
  ...chunkHead(answer),
  choices: [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }],
  usage: null,
});

const usageChunk = (answer: SseAnswer, prompt: number, completion: number) => ({
  ...chunkHead(answer),
  choices: [],
  usage: {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  },
});

const COMPLETION = {
  model: 'plauder-en',
  messages: [{ role: 'user', content: 'Hi' }],
  stream: true,
  stream_options: { include_usage: true },
};

describe('/api/chat ends its stream', () => {
  test('with done after a reply, and with an error event after a failure past the first delta', async ({
    served,
  }) => {
    const { s, up, key } = served;
    await up.script(
      { stream: { pieces: ['Es ', 'war'] } },
      { stream: { pieces: ['Es ', 'war'], breakAfter: 1 } },
    );
    const reply = await post(s, key, '/api/chat', { message: 'Hallo' });
    expect(
      reply.text.endsWith(
        `${event('delta', { text: ' war' })}${event('done', { reply: 'Es war' })}`,
      ),
    ).toBe(true);

    const failed = await post(s, key, '/api/chat', { message: 'Hallo' });
    const requestId = failed.headers.get('x-request-id');
    const error = { code: 'core_unavailable', message: UNAVAILABLE, requestId };
    expect(
      failed.text.endsWith(`${event('delta', { text: 'Es' })}${event('error', { error })}`),
    ).toBe(true);
  });

  test('replays a kept reply as one delta and done', async ({ served }) => {
    const { s, up, key } = served;
    await up.script({ stream: { pieces: ['Es ', 'war'] } });
    const headers = { 'idempotency-key': 'once' };
    await post(s, key, '/api/chat', { message: 'Hallo' }, headers);
    const again = await post(s, key, '/api/chat', { message: 'Hallo' }, headers);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(
      `: stream\n\n${event('delta', { text: 'Es war' })}${event('done', { reply: 'Es war' })}`,
    );
  });
});

describe('/v1/chat/completions ends its stream', () => {
  test('with the finish, usage and [DONE] chunks after a reply', async ({ served }) => {
    const { s, up, key } = served;
    await up.script({
      stream: { pieces: ['Ahoy ', 'there'], usage: { prompt_tokens: 12, completion_tokens: 2 } },
    });
    const answer = await post(s, key, '/v1/chat/completions', COMPLETION);
    const finish = `${data(finishChunk(answer, 'stop'))}${data(usageChunk(answer, 12, 2))}`;
    const end = `${data(contentChunk(answer, ' there'))}${finish}data: [DONE]\n\n`;
    expect(answer.text.endsWith(end)).toBe(true);
  });

  test("with the upstream's tool_calls finish reason, live and replayed", async ({ served }) => {
    const { s, key } = served;
    const tool = {
      type: 'function',
      function: { name: 'get_time', parameters: { type: 'object' } },
    };
    const body = { ...COMPLETION, tools: [tool] };
    const headers = { 'idempotency-key': 'tools-once' };
    const live = await post(s, key, '/v1/chat/completions', body, headers);
    const again = await post(s, key, '/v1/chat/completions', body, headers);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    for (const answer of [live, again]) {
      const finish = data(finishChunk(answer, 'tool_calls'));
      expect(answer.text).toContain(`${finish}${data(usageChunk(answer, 7, 0))}data: [DONE]\n\n`);
    }
    const call = JSON.parse(again.events[1]?.data ?? '{}').choices[0].delta.tool_calls[0];
    expect(call).toMatchObject({ index: 0, type: 'function', function: { name: 'get_time' } });
    expect(again.events.map((e) => e.data.slice(0, 6))).toEqual([
      '{"id":',
      '{"id":',
      '{"id":',
      '{"id":',
      '[DONE]',
    ]);
  });

  test('with an OpenAI error chunk and no [DONE] after a failure past the first delta', async ({
    served,
  }) => {
    const { s, up, key } = served;
    await up.script({ stream: { pieces: ['Ahoy ', 'there'], breakAfter: 1 } });
    const answer = await post(s, key, '/v1/chat/completions', COMPLETION);
    const error = {
      message: UNAVAILABLE,
      type: 'server_error',
      param: null,
      code: 'core_unavailable',
    };
    const end = `${data(contentChunk(answer, 'Ahoy'))}${data({ error })}`;
    expect(answer.text.endsWith(end)).toBe(true);
  });
});
