/**
 * A `tool` message that answers no call of the assistant message before it is a bad body
 * (docs/openai.md, "Messages"): 400 `invalid_request_error` naming the message, before
 * anything is counted and before any upstream is asked, on every core and plain or
 * streamed. An upstream refuses such a request (OpenAI answers 400), which was a 500
 * `core_unavailable` with a stack in the log. Tool results that do answer a call, in the
 * body or in the stored session (`X-Session-Id`), still reach the upstream.
 */
import { describe, expect } from 'vitest';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { http, type TestServer } from '../helpers/test-server.js';

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

const CALL = { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{}' } };
const TOOLS = [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }];

/** Bodies whose message at `at` answers no call, by how it fails to. */
const UNANSWERED: ReadonlyArray<[string, number, object[]]> = [
  ['after a user message', 1, [{ role: 'user', content: 'Hi' }, toolResult('call_1')]],
  [
    'after an assistant message without tool_calls',
    2,
    [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
      toolResult('call_1'),
    ],
  ],
  [
    'with an id the assistant did not call',
    2,
    [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: [CALL] },
      toolResult('call_2'),
    ],
  ],
  [
    'in the history, after the user message that followed the results',
    4,
    [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: null, tool_calls: [CALL] },
      toolResult('call_1'),
      { role: 'user', content: 'And tomorrow?' },
      toolResult('call_1'),
      { role: 'assistant', content: 'Sunny.' },
      { role: 'user', content: 'Thanks' },
    ],
  ],
];

function toolResult(id: string) {
  return { role: 'tool', tool_call_id: id, content: '{"sky":"clear"}' };
}

/** What OpenAI answers such a request with. */
const OPENAI_REFUSAL = {
  status: 400,
  body: {
    error: {
      message:
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
      type: 'invalid_request_error',
      param: 'messages.[1].role',
      code: null,
    },
  },
};

describe.each(['builtin', 'openai'])('/v1 with the %s core', (core) => {
  test.for(UNANSWERED)(
    'answers 400 naming the tool message %s (messages[%i]), plain and streamed, before anything is counted',
    async ([_how, index, messages], { serve, upstream }) => {
      await upstream.script(OPENAI_REFUSAL, OPENAI_REFUSAL);
      const s = await serve(core === 'openai' ? { env: openAiEnv(upstream) } : {});
      const { id, key } = await s.createKey();
      for (const stream of [false, true]) {
        const res = await http(`${s.url}/v1/chat/completions`, {
          key,
          body: { model: 'plauder-en', messages, stream, tools: TOOLS },
        });
        expect(res.status).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(res.json.error).toMatchObject({
          type: 'invalid_request_error',
          code: 'message_invalid',
          param: `messages[${index}]`,
          message: expect.stringContaining(`messages[${index}] answers no tool call`),
        });
      }
      expect(await used(s, id)).toBe(0);
      expect((await upstream.received()).requests).toEqual([]);
      const errors = s.logs.map((l) => JSON.parse(l)).filter((l) => l.level >= 50);
      expect(errors).toEqual([]);
    },
  );
});

describe('/v1 with the openai core, tool results that answer a call', () => {
  test('in the body: passed to the upstream and answered', async ({ serve, upstream }) => {
    const s = await serve({ env: openAiEnv(upstream) });
    const { id, key } = await s.createKey();
    const res = await http(`${s.url}/v1/chat/completions`, {
      key,
      body: {
        model: 'plauder-en',
        tools: TOOLS,
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content: null, tool_calls: [CALL] },
          { role: 'system', content: 'Be brief.' },
          toolResult('call_1'),
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toBe('tool said: {"sky":"clear"}');
    expect(await used(s, id)).toBe(1);
  });

  test('in the stored session (X-Session-Id), the body holding only the results', async ({
    serve,
    upstream,
  }) => {
    const s = await serve({ env: openAiEnv(upstream) });
    const { key } = await s.createKey();
    const headers = { 'x-session-id': 'agent' };
    const asked = await http(`${s.url}/v1/chat/completions`, {
      key,
      headers,
      body: {
        model: 'plauder-en',
        tools: TOOLS,
        messages: [{ role: 'user', content: 'Weather?' }],
      },
    });
    const call = asked.json.choices[0].message.tool_calls[0];
    const res = await http(`${s.url}/v1/chat/completions`, {
      key,
      headers,
      body: { model: 'plauder-en', tools: TOOLS, messages: [toolResult(call.id)] },
    });
    expect(res.status).toBe(200);
    expect(res.json.choices[0].message.content).toBe('tool said: {"sky":"clear"}');
  });
});
