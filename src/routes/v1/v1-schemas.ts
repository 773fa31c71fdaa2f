/**
 * @module routes/v1/v1-schemas
 * Schemas of the OpenAI-compatible routes: they document `/v1` in `/openapi.json` and
 * serialise its answers (so they must match OpenAI's shapes exactly, nulls included).
 */
import { ERROR_MESSAGES, type ErrorCode } from '../../errors/error-codes.js';
import { type ErrorShape, errorResponsesIn, type HeaderName } from '../responses.js';
import {
  MODEL_NOT_FOUND,
  type OpenAiErrorCode,
  openAiError,
  openAiStatus,
} from './completion-answer.js';

export const openAiErrorSchema = {
  $id: 'OpenAiError',
  type: 'object',
  description: "OpenAI's error shape; `code` is plauder's error code.",
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'param', 'code'],
      properties: {
        message: { type: 'string' },
        type: { type: 'string' },
        param: { type: ['string', 'null'] },
        code: { type: ['string', 'null'] },
      },
    },
  },
} as const;

type Example = readonly [param: string | null, message: string];

const MODEL_EXAMPLE: Example = [
  'model',
  'The model `gpt-4o` does not exist. Use one of: plauder-de, plauder-en.',
];

/** What `/v1` says where a code's own message would not fit OpenAI's body (param named). */
const OWN_EXAMPLES: Readonly<Partial<Record<ErrorCode, Example>>> = {
  body_invalid: ['n', 'Only n=1 is supported: plauder makes one reply per turn.'],
  message_missing: ['messages', 'The last message must be a user message.'],
  message_invalid: [
    'messages[0].role',
    "'tool' messages are not supported: use system, developer, user or assistant.",
  ],
  message_too_long: [
    'messages[0].content',
    'The last user message is longer than 4000 characters.',
  ],
  session_id_invalid: [
    'X-Session-Id',
    'The X-Session-Id header must be 1-128 characters of A-Z a-z 0-9 . _ : @ -.',
  ],
};

/** OpenAI's error shape, each code with the status `openAiStatus` gives it. */
const OPENAI_ERRORS: ErrorShape<OpenAiErrorCode> = {
  ref: 'OpenAiError#',
  statusOf: (code) => openAiStatus(code).status,
  example: (code) => {
    const [param, message] =
      code === MODEL_NOT_FOUND
        ? MODEL_EXAMPLE
        : (OWN_EXAMPLES[code] ?? [null, ERROR_MESSAGES[code]]);
    return openAiError(code, openAiStatus(code).type, message, param);
  },
  note: " (OpenAI's error shape)",
};

/** The error answers of a `/v1` route; `extra` adds headers a status carries on this route. */
export function openAiErrorResponses(
  codes: readonly OpenAiErrorCode[],
  extra: Readonly<Partial<Record<number, readonly HeaderName[]>>> = {},
) {
  return errorResponsesIn(OPENAI_ERRORS, codes, extra);
}

const toolCallSchema = {
  type: 'object',
  required: ['id', 'type', 'function'],
  properties: {
    id: { type: 'string' },
    type: { type: 'string', const: 'function' },
    function: {
      type: 'object',
      required: ['name', 'arguments'],
      properties: { name: { type: 'string' }, arguments: { type: 'string' } },
    },
  },
} as const;

const messageSchema = {
  type: 'object',
  required: ['role'],
  properties: {
    role: { type: 'string', enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
    content: {
      oneOf: [
        { type: 'string' },
        { type: 'null' },
        {
          type: 'array',
          items: {
            type: 'object',
            required: ['type'],
            properties: {
              type: { type: 'string', enum: ['text', 'image_url', 'refusal'] },
              text: { type: 'string' },
              image_url: { type: 'object', properties: { url: { type: 'string' } } },
            },
          },
        },
      ],
    },
    tool_calls: { type: 'array', items: toolCallSchema },
    tool_call_id: { type: 'string' },
  },
} as const;

export const completionRequestSchema = {
  type: 'object',
  required: ['model', 'messages'],
  description:
    "OpenAI's Chat Completions body. The last message (a user message, or in an agent loop " +
    "the tool results) is the turn's input; earlier messages are the history (unless " +
    "`X-Session-Id` is sent), system/developer messages follow the operator's system prompt " +
    'for an LLM core. With an LLM core (`openai`) `response_format`, `tools`, `tool_choice`, ' +
    '`parallel_tool_calls`, tool calls, tool messages and image parts pass through to the ' +
    'upstream; other cores refuse them (400 naming the parameter). `n` other than 1 and ' +
    'audio are refused on every core; unknown fields are ignored.',
  properties: {
    model: { type: 'string', enum: ['plauder-de', 'plauder-en'] },
    messages: { type: 'array', minItems: 1, items: messageSchema },
    stream: { type: 'boolean' },
    stream_options: {
      type: 'object',
      properties: { include_usage: { type: 'boolean' } },
    },
    max_tokens: { type: 'integer', minimum: 1 },
    max_completion_tokens: { type: 'integer', minimum: 1 },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    stop: {
      oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }],
    },
    user: { type: 'string' },
    n: { type: 'integer', const: 1 },
    response_format: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { type: 'string', enum: ['text', 'json_object', 'json_schema'] },
        json_schema: { type: 'object' },
      },
    },
    tools: { type: 'array', minItems: 1, items: { type: 'object' } },
    tool_choice: { oneOf: [{ type: 'string' }, { type: 'object' }] },
    parallel_tool_calls: { type: 'boolean' },
  },
} as const;

const usageSchema = {
  type: 'object',
  description:
    "The upstream's token counts when it reports them, else an estimate (about four characters a token; see docs/openai.md).",
  required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
  properties: {
    prompt_tokens: { type: 'integer' },
    completion_tokens: { type: 'integer' },
    total_tokens: { type: 'integer' },
  },
} as const;

const chatCompletionSchema = {
  type: 'object',
  required: ['id', 'object', 'created', 'model', 'choices', 'usage'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', const: 'chat.completion' },
    created: { type: 'integer' },
    model: { type: 'string' },
    choices: {
      type: 'array',
      items: {
        type: 'object',
        required: ['index', 'message', 'logprobs', 'finish_reason'],
        properties: {
          index: { type: 'integer' },
          message: {
            type: 'object',
            required: ['role', 'content', 'refusal'],
            properties: {
              role: { type: 'string', const: 'assistant' },
              content: { type: ['string', 'null'] },
              refusal: { type: 'null' },
              tool_calls: { type: 'array', items: toolCallSchema },
            },
          },
          logprobs: { type: 'null' },
          finish_reason: { type: 'string' },
        },
      },
    },
    usage: usageSchema,
  },
} as const;

const completionEventStreamSchema = {
  type: 'string',
  description:
    'With `"stream": true`: `chat.completion.chunk` objects as `data:` lines, as OpenAI sends ' +
    'them: the first with `delta.role`, then `delta.content` pieces, a last one with ' +
    '`finish_reason`, then (with `stream_options.include_usage`) one with `usage` and no ' +
    'choices, then `data: [DONE]`. A failure after the stream began is a last ' +
    '`data: {"error": {...}}` (not counted). `: ping` comments come at least every 15 s.',
  example: streamExample(),
} as const;

/** A streamed completion with `stream_options.include_usage`, as it goes over the wire. */
function streamExample(): string {
  const head = {
    id: 'chatcmpl-3b183877208d48a7a2e17d1ef62b23b5',
    object: 'chat.completion.chunk',
    created: 1_795_000_000,
    model: 'plauder-de',
  };
  const chunk = (delta: object, finish: string | null) => ({
    ...head,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    usage: null,
  });
  return [
    chunk({ role: 'assistant', content: '', refusal: null }, null),
    chunk({ content: 'Hallo! ' }, null),
    chunk({ content: 'Wie kann ich helfen?' }, null),
    chunk({}, 'stop'),
    { ...head, choices: [], usage: { prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 } },
  ]
    .map((data) => `data: ${JSON.stringify(data)}\n\n`)
    .concat('data: [DONE]\n\n')
    .join('');
}

export const completionAnswerSchema = {
  description: 'A chat.completion, or chat.completion.chunk events when streamed.',
  content: {
    'application/json': {
      schema: chatCompletionSchema,
      example: {
        id: 'chatcmpl-3b183877208d48a7a2e17d1ef62b23b5',
        object: 'chat.completion',
        created: 1_795_000_000,
        model: 'plauder-de',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Hallo! Wie kann ich helfen?', refusal: null },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: { prompt_tokens: 4, completion_tokens: 6, total_tokens: 10 },
      },
    },
    'text/event-stream': { schema: completionEventStreamSchema },
  },
} as const;

const modelExample = (id: string) => ({
  id,
  object: 'model',
  created: 1_767_225_600,
  owned_by: 'plauder',
});

export const modelSchema = {
  type: 'object',
  required: ['id', 'object', 'created', 'owned_by'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', const: 'model' },
    created: { type: 'integer' },
    owned_by: { type: 'string' },
  },
  examples: [modelExample('plauder-de')],
} as const;

export const modelListSchema = {
  type: 'object',
  required: ['object', 'data'],
  properties: {
    object: { type: 'string', const: 'list' },
    data: { type: 'array', items: modelSchema },
  },
  examples: [{ object: 'list', data: [modelExample('plauder-de'), modelExample('plauder-en')] }],
} as const;

export const completionHeaders = {
  type: 'object',
  properties: {
    'x-session-id': {
      type: 'string',
      pattern: '^[A-Za-z0-9._:@-]{1,128}$',
      description:
        'Server-side memory: the stored session with this id (the same sessions as /api/chat) ' +
        'is the history instead of the earlier messages, and the turn is stored in it.',
    },
    'idempotency-key': {
      type: 'string',
      description: 'Makes a retry safe, as on /api/chat (see there).',
    },
  },
} as const;
