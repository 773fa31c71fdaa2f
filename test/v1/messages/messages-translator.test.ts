/**
 * The Messages door's one translation, on its own (docs/contract.md, "Anthropic's Messages
 * door"): recorded Anthropic bodies (as @anthropic-ai/sdk and @ai-sdk/anthropic send them)
 * become the turn request the use case takes, with Chat Completions messages and parameters
 * for a gateway core; a turn's decision becomes Anthropic's message object and its stream
 * events. No server, no database.
 */
import { describe, expect, it } from 'vitest';
import type { TurnRequest, TurnStamp } from '../../../src/chat/take-turn.js';
import type { EventStream } from '../../../src/routes/event-stream.js';
import { messageObject, messagesEvents } from '../../../src/routes/v1/messages/messages-answer.js';
import { parseMessagesRequest } from '../../../src/routes/v1/messages/messages-request.js';

const JSON_TYPE = 'application/json';
const options = { messageMaxChars: 4000, requireMaxTokens: true };

function read(body: unknown, session?: string) {
  return parseMessagesRequest(JSON_TYPE, Buffer.from(JSON.stringify(body)), session, options);
}

function turnOf(body: unknown, session?: string): Extract<TurnRequest, { ok: true }> {
  const { turn } = read(body, session);
  if (!turn.ok) throw new Error(`refused: ${JSON.stringify(turn)}`);
  return turn;
}

function refusalOf(body: unknown) {
  const { turn } = read(body);
  if (turn.ok) throw new Error('expected a refusal');
  return turn;
}

const weather = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};

/** A tool loop's second request, as @anthropic-ai/sdk sends it. */
const toolLoop = {
  model: 'plauder-en',
  max_tokens: 1024,
  system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
  tools: [weather],
  tool_choice: { type: 'auto', disable_parallel_tool_use: true },
  messages: [
    { role: 'user', content: 'Weather in Berlin?' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Berlin' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '21 °C' }] },
        { type: 'text', text: 'And tomorrow?' },
      ],
    },
  ],
  stop_sequences: ['END'],
  temperature: 0.5,
  top_p: 0.9,
  metadata: { user_id: 'u-1' },
};

describe('an Anthropic request as the turn request', () => {
  it('a plain message: its text, the earlier messages as history, the system as instructions', () => {
    const turn = turnOf({
      model: 'plauder-de',
      max_tokens: 100,
      system: 'Du bist knapp.',
      messages: [
        { role: 'user', content: 'Hallo' },
        { role: 'assistant', content: [{ type: 'text', text: 'Hallo!' }] },
        { role: 'user', content: [{ type: 'text', text: 'Wie geht es?' }] },
      ],
    });
    expect(turn).toEqual({
      ok: true,
      message: 'Wie geht es?',
      sessionId: undefined,
      history: [{ message: 'Hallo', reply: 'Hallo!', language: 'de' }],
      instructions: ['Du bist knapp.'],
      sampling: { maxTokens: 100 },
    });
    expect(
      read({ model: 'plauder-en', max_tokens: 1, messages: [{ role: 'user', content: 'Hi' }] })
        .language,
    ).toBe('en');
  });

  it('a tool loop: tool_use as tool_calls, tool_result as a tool message, tools as functions, tool_choice as Chat Completions', () => {
    const turn = turnOf(toolLoop);
    expect(turn.message).toBe('21 °C\nAnd tomorrow?');
    expect(turn.input).toEqual([
      { role: 'tool', tool_call_id: 'toolu_1', content: '21 °C' },
      { role: 'user', content: 'And tomorrow?' },
    ]);
    expect(turn.history).toEqual([
      {
        message: 'Weather in Berlin?',
        reply: 'Let me look.',
        language: 'en',
        wire: [
          { role: 'user', content: 'Weather in Berlin?' },
          {
            role: 'assistant',
            content: 'Let me look.',
            tool_calls: [
              {
                id: 'toolu_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Berlin"}' },
              },
            ],
          },
        ],
      },
    ]);
    expect(turn.gateway).toEqual({
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'The weather in a city',
            parameters: weather.input_schema,
          },
        },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    });
    expect(turn.sampling).toEqual({
      maxTokens: 1024,
      temperature: 0.5,
      topP: 0.9,
      stop: ['END'],
      user: 'u-1',
    });
    expect(turn.instructions).toEqual(['Be brief.']);
    expect(turn.gatewayOnly?.param).toBe('tools');
  });

  it.for<[string, unknown, unknown]>([
    ['any', { type: 'any' }, 'required'],
    ['none', { type: 'none' }, 'none'],
    [
      'a named tool',
      { type: 'tool', name: 'get_weather' },
      { type: 'function', function: { name: 'get_weather' } },
    ],
  ])('tool_choice %s', ([, choice, expected]) => {
    const turn = turnOf({ ...toolLoop, tool_choice: choice });
    expect(turn.gateway?.tool_choice).toEqual(expected);
    expect(turn.gateway?.parallel_tool_calls).toBeUndefined();
  });

  it('an image block as an image_url part, named for a core that cannot take it', () => {
    const turn = turnOf({
      model: 'plauder-en',
      max_tokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is it?' },
            {
              type: 'image',
              source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' },
            },
            { type: 'image', source: { type: 'url', url: 'https://example.org/a.png' } },
          ],
        },
      ],
    });
    expect(turn.input).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is it?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.org/a.png' } },
        ],
      },
    ]);
    expect(turn.gatewayOnly).toEqual({
      param: 'messages.0.content.1',
      message: 'Image blocks are not supported',
    });
  });

  it('with X-Session-Id the stored session is the history: only the tool results are the input', () => {
    const turn = turnOf(toolLoop, 'agent-1');
    expect(turn.sessionId).toBe('agent-1');
    expect(turn.history).toBeUndefined();
    expect(turn.input?.[0]).toEqual({ role: 'tool', tool_call_id: 'toolu_1', content: '21 °C' });
  });

  it('leaves thinking blocks of an earlier answer out, and estimates the input', () => {
    const request = read({
      model: 'plauder-en',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'abcdabcd' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'hm', signature: 's' },
            { type: 'text', text: 'abcd' },
          ],
        },
        { role: 'user', content: 'abcd' },
      ],
    });
    expect(request.turn.ok && request.turn.history).toEqual([
      { message: 'abcdabcd', reply: 'abcd', language: 'en' },
    ]);
    expect(request.inputTokens).toBe(4);
  });

  it.for<[string, object, string, string?]>([
    ['a missing max_tokens', { max_tokens: undefined }, 'max_tokens'],
    ['an unknown model', { model: 'claude-opus-4' }, 'model', 'model_not_found'],
    ['a server tool', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }, 'tools.0'],
    ['top_k', { top_k: 5 }, 'top_k'],
    ['thinking', { thinking: { type: 'enabled', budget_tokens: 2000 } }, 'thinking'],
    ['mcp_servers', { mcp_servers: [{ type: 'url', url: 'https://x', name: 'x' }] }, 'mcp_servers'],
    ['five stop sequences', { stop_sequences: ['a', 'b', 'c', 'd', 'e'] }, 'stop_sequences'],
    ['a temperature above 1', { temperature: 1.5 }, 'temperature'],
    ['an unknown tool_choice', { tool_choice: { type: 'sometimes' } }, 'tool_choice'],
    [
      'a document block',
      {
        messages: [
          { role: 'user', content: [{ type: 'document', source: { type: 'text', data: 'x' } }] },
        ],
      },
      'messages.0.content.0.type',
    ],
    [
      'an assistant prefill',
      {
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Well' },
        ],
      },
      'messages.1',
    ],
    ['an empty messages list', { messages: [] }, 'messages'],
  ])('refuses %s, naming the field', ([, change, param, own]) => {
    const body = {
      model: 'plauder-en',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'Hi' }],
      ...change,
    };
    const refusal = refusalOf(body);
    expect(refusal.detail?.param).toBe(param);
    expect(refusal.detail?.code).toBe(own);
  });

  it('count_tokens needs no max_tokens', () => {
    const body = { model: 'plauder-en', messages: [{ role: 'user', content: 'Hello there' }] };
    const counted = parseMessagesRequest(JSON_TYPE, Buffer.from(JSON.stringify(body)), undefined, {
      ...options,
      requireMaxTokens: false,
    });
    expect(counted.turn.ok).toBe(true);
    expect(counted.inputTokens).toBe(3);
  });

  it('refuses a body that is not a JSON object', () => {
    const refused = parseMessagesRequest(JSON_TYPE, Buffer.from('{"model":'), undefined, options);
    expect(refused.turn).toMatchObject({ ok: false, code: 'body_invalid' });
  });
});

const stamp: TurnStamp = {
  turnId: '3b183877-208d-48a7-a2e1-7d1ef62b23b5',
  createdAt: 1_795_000_000_000,
};
const usage = { promptTokens: 12, completionTokens: 5 };
const call = {
  id: 'call_1',
  type: 'function' as const,
  function: { name: 'get_weather', arguments: '{"city":"Berlin"}' },
};

describe('a decision as an Anthropic answer', () => {
  it('a reply with tool calls: text and tool_use blocks, stop_reason tool_use, the usage', () => {
    expect(
      messageObject(stamp, 'plauder-en', 'Let me look.', usage, {
        reason: 'tool_calls',
        toolCalls: [call],
      }),
    ).toEqual({
      id: 'msg_3b183877208d48a7a2e17d1ef62b23b5',
      type: 'message',
      role: 'assistant',
      model: 'plauder-en',
      content: [
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Berlin' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 12, output_tokens: 5 },
    });
  });

  it.for<[string | undefined, string]>([
    [undefined, 'end_turn'],
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
  ])('finish_reason %s is stop_reason %s', ([reason, expected]) => {
    const finish = reason === undefined ? undefined : { reason };
    expect(messageObject(stamp, 'plauder-en', 'Hi', usage, finish).stop_reason).toBe(expected);
  });

  /** The events a door writes, in order: [name, data]. */
  function recorder() {
    const events: Array<[string | undefined, unknown]> = [];
    const stream: EventStream = {
      send: (data, name) => events.push([name, JSON.parse(data)]),
      open: (data, name) => events.push([name, JSON.parse(data)]),
      sendPieces: async (name, pieces) => {
        events.push([name, JSON.parse([...pieces].join(''))]);
      },
      end: () => {},
      closed: false,
      ready: () => undefined,
    };
    return { events, stream };
  }

  it('a streamed answer: message_start, a text block with a ping, tool_use blocks from tool-call deltas, message_delta, message_stop', () => {
    const { events, stream } = recorder();
    const door = messagesEvents('plauder-en', 3)(stream, stamp);
    door.delta('Let ');
    door.delta('me look.');
    // As Chat Completions streams them: the id and name first, then the arguments in pieces.
    door.toolCalls?.([
      {
        index: 0,
        id: 'call_1',
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      },
    ]);
    door.toolCalls?.([{ index: 0, function: { arguments: '{"city":' } }]);
    door.toolCalls?.([{ index: 0, function: { arguments: '"Berlin"}' } }]);
    door.done({
      kind: 'reply',
      reply: 'Let me look.',
      quota: undefined as never,
      usage,
      finish: { reason: 'tool_calls', toolCalls: [call] },
      replayed: false,
      ...stamp,
    });
    expect(events.map(([name]) => name)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    // Every event is named by its type, as Anthropic's clients read them.
    for (const [name, data] of events) expect((data as { type: string }).type).toBe(name);
    expect(events[0]?.[1]).toEqual({
      type: 'message_start',
      message: {
        id: 'msg_3b183877208d48a7a2e17d1ef62b23b5',
        type: 'message',
        role: 'assistant',
        model: 'plauder-en',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 3, output_tokens: 0 },
      },
    });
    expect(events[6]?.[1]).toEqual({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} },
    });
    expect(events[8]?.[1]).toEqual({
      type: 'content_block_delta',
      index: 1,
      delta: { type: 'input_json_delta', partial_json: '"Berlin"}' },
    });
    expect(events[10]?.[1]).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 12, output_tokens: 5 },
    });
  });

  it('a failure after the stream began: the open block stopped, then an error event', () => {
    const { events, stream } = recorder();
    const door = messagesEvents('plauder-en', 3)(stream, stamp);
    door.delta('Es war');
    door.error('core_timeout', 'req-1');
    expect(events.slice(-2)).toEqual([
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      [
        'error',
        {
          type: 'error',
          error: {
            type: 'api_error',
            message: 'The conversational core did not answer in time. Please try again later.',
            details: { error_code: 'core_timeout' },
          },
          request_id: 'req-1',
        },
      ],
    ]);
  });

  it('a kept reply replays as one text delta and each tool call whole', () => {
    const { events, stream } = recorder();
    const door = messagesEvents('plauder-en', 3)(stream, stamp);
    const decision = {
      kind: 'reply' as const,
      reply: 'Hi',
      quota: undefined as never,
      usage,
      finish: { reason: 'tool_calls', toolCalls: [call] },
      replayed: true,
      ...stamp,
    };
    door.replay(decision);
    door.done(decision);
    const deltas = events
      .filter(([name]) => name === 'content_block_delta')
      .map(([, data]) => data);
    expect(deltas).toEqual([
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: '{"city":"Berlin"}' },
      },
    ]);
  });
});
