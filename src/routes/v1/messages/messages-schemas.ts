/**
 * @module routes/v1/messages/messages-schemas
 * Schemas of Anthropic's Messages door: they document `/v1/messages` in `/openapi.json` and
 * serialise its answers (so they follow Anthropic's shapes, nulls included).
 */
import { ERROR_MESSAGES } from '../../../errors/error-codes.js';
import { type ErrorShape, errorResponsesIn, type HeaderName } from '../../responses.js';
import { MODEL_NOT_FOUND, type OpenAiErrorCode } from '../completion-answer.js';
import { anthropicError, anthropicStatus } from './messages-answer.js';

export const anthropicErrorSchema = {
  $id: 'AnthropicError',
  type: 'object',
  description:
    "Anthropic's error shape; `error.details.error_code` is plauder's error code, `request_id` the request's id.",
  required: ['type', 'error', 'request_id'],
  properties: {
    type: { type: 'string', const: 'error' },
    error: {
      type: 'object',
      required: ['type', 'message', 'details'],
      properties: {
        type: { type: 'string' },
        message: { type: 'string' },
        details: {
          type: 'object',
          required: ['error_code'],
          properties: { error_code: { type: 'string' } },
        },
      },
    },
    request_id: { type: 'string' },
  },
} as const;

const REQUEST_ID_EXAMPLE = '3b183877-208d-48a7-a2e1-7d1ef62b23b5';

/** What the door says where a code's own message would not name the field. */
const OWN_EXAMPLES: Readonly<Partial<Record<OpenAiErrorCode, string>>> = {
  [MODEL_NOT_FOUND]:
    'model: The model `claude-opus-4` does not exist. Use one of: plauder-de, plauder-en.',
  body_invalid: 'max_tokens: Field required',
  message_missing: 'messages: at least one message is required',
  message_invalid:
    'messages.0.content.0.type: `document` blocks are not supported: use text, image and tool_result blocks.',
  message_too_long: 'messages.0.content: The last user message is longer than 4000 characters.',
  session_id_invalid: 'X-Session-Id: The header must be 1-128 characters of A-Z a-z 0-9 . _ : @ -.',
};

const ANTHROPIC_ERRORS: ErrorShape<OpenAiErrorCode> = {
  ref: 'AnthropicError#',
  statusOf: (code) => anthropicStatus(code).status,
  example: (code) =>
    anthropicError(
      code,
      OWN_EXAMPLES[code] ?? (code === MODEL_NOT_FOUND ? '' : ERROR_MESSAGES[code]),
      REQUEST_ID_EXAMPLE,
    ),
  note: " (Anthropic's error shape; the code in `error.details.error_code`)",
  codesSchema: (codes) => ({
    type: 'object',
    properties: {
      error: {
        type: 'object',
        properties: {
          details: {
            type: 'object',
            properties: { error_code: { type: 'string', enum: codes } },
          },
        },
      },
    },
  }),
};

/** The error answers of a messages route; `extra` adds headers a status carries on this route. */
export function anthropicErrorResponses(
  codes: readonly OpenAiErrorCode[],
  extra: Readonly<Partial<Record<number, readonly HeaderName[]>>> = {},
) {
  return errorResponsesIn(ANTHROPIC_ERRORS, codes, extra);
}

const textBlock = {
  type: 'object',
  required: ['type', 'text'],
  properties: { type: { type: 'string', const: 'text' }, text: { type: 'string' } },
} as const;

const imageBlock = {
  type: 'object',
  required: ['type', 'source'],
  properties: {
    type: { type: 'string', const: 'image' },
    source: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { type: 'string', enum: ['base64', 'url'] },
        media_type: { type: 'string' },
        data: { type: 'string' },
        url: { type: 'string' },
      },
    },
  },
} as const;

const toolUseBlock = {
  type: 'object',
  required: ['type', 'id', 'name', 'input'],
  properties: {
    type: { type: 'string', const: 'tool_use' },
    id: { type: 'string' },
    name: { type: 'string' },
    input: { type: 'object', additionalProperties: true },
  },
} as const;

const toolResultBlock = {
  type: 'object',
  required: ['type', 'tool_use_id'],
  properties: {
    type: { type: 'string', const: 'tool_result' },
    tool_use_id: { type: 'string' },
    content: { oneOf: [{ type: 'string' }, { type: 'array', items: textBlock }] },
    is_error: { type: 'boolean' },
  },
} as const;

const messageParam = {
  type: 'object',
  required: ['role', 'content'],
  properties: {
    role: { type: 'string', enum: ['user', 'assistant'] },
    content: {
      oneOf: [
        { type: 'string' },
        { type: 'array', items: { oneOf: [textBlock, imageBlock, toolUseBlock, toolResultBlock] } },
      ],
    },
  },
} as const;

/** The fields `/v1/messages` and `count_tokens` share. */
const requestProperties = {
  model: { type: 'string', enum: ['plauder-de', 'plauder-en'] },
  messages: { type: 'array', minItems: 1, items: messageParam },
  system: { oneOf: [{ type: 'string' }, { type: 'array', items: textBlock }] },
  tools: {
    type: 'array',
    items: {
      type: 'object',
      required: ['name', 'input_schema'],
      properties: {
        name: { type: 'string' },
        description: { type: 'string' },
        input_schema: { type: 'object' },
      },
    },
  },
  tool_choice: {
    type: 'object',
    required: ['type'],
    properties: {
      type: { type: 'string', enum: ['auto', 'any', 'tool', 'none'] },
      name: { type: 'string' },
      disable_parallel_tool_use: { type: 'boolean' },
    },
  },
} as const;

export const messagesRequestSchema = {
  type: 'object',
  required: ['model', 'max_tokens', 'messages'],
  description:
    "Anthropic's Messages body. The last user message (or in an agent loop its tool results) " +
    "is the turn's input; earlier messages are the history (unless `X-Session-Id` is sent); " +
    "`system` follows the operator's system prompt for an LLM core. With an LLM core " +
    '(`openai`) tools, `tool_choice`, `tool_use` / `tool_result` blocks and image blocks go to ' +
    'the upstream as Chat Completions; other cores refuse them (400 naming the field). Server ' +
    'tools, `thinking`, `top_k`, `container`, `mcp_servers`, `context_management` and ' +
    '`output_config` are refused on every core; unknown fields are ignored.',
  properties: {
    ...requestProperties,
    max_tokens: { type: 'integer', minimum: 1 },
    stop_sequences: { type: 'array', items: { type: 'string' }, maxItems: 4 },
    temperature: { type: 'number', minimum: 0, maximum: 1 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    stream: { type: 'boolean' },
    metadata: { type: 'object', properties: { user_id: { type: 'string' } } },
  },
} as const;

export const countTokensRequestSchema = {
  type: 'object',
  required: ['model', 'messages'],
  description: 'The same fields as `/v1/messages` (`max_tokens` not needed).',
  properties: requestProperties,
} as const;

const usageSchema = {
  type: 'object',
  description:
    "The upstream's token counts when it reports them, else an estimate (about four characters a token; see docs/anthropic.md).",
  required: ['input_tokens', 'output_tokens'],
  properties: { input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' } },
} as const;

const messageSchema = {
  type: 'object',
  required: ['id', 'type', 'role', 'model', 'content', 'stop_reason', 'stop_sequence', 'usage'],
  properties: {
    id: { type: 'string' },
    type: { type: 'string', const: 'message' },
    role: { type: 'string', const: 'assistant' },
    model: { type: 'string' },
    content: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type'],
        properties: {
          type: { type: 'string', enum: ['text', 'tool_use'] },
          text: { type: 'string' },
          id: { type: 'string' },
          name: { type: 'string' },
          input: { type: 'object', additionalProperties: true },
        },
      },
    },
    stop_reason: { type: 'string', enum: ['end_turn', 'max_tokens', 'stop_sequence', 'tool_use'] },
    stop_sequence: { type: 'null' },
    usage: usageSchema,
  },
} as const;

const MESSAGE_ID = 'msg_3b183877208d48a7a2e17d1ef62b23b5';

/** A streamed message, as it goes over the wire. */
function streamExample(): string {
  const start = {
    type: 'message_start',
    message: {
      id: MESSAGE_ID,
      type: 'message',
      role: 'assistant',
      model: 'plauder-en',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 2, output_tokens: 0 },
    },
  };
  const delta = (text: string) => ({
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'text_delta', text },
  });
  return [
    start,
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'ping' },
    delta('Hello! '),
    delta('How can I help?'),
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { input_tokens: 2, output_tokens: 6 },
    },
    { type: 'message_stop' },
  ]
    .map((data) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`)
    .join('');
}

export const messageAnswerSchema = {
  description: 'A message, or its events when streamed.',
  content: {
    'application/json': {
      schema: messageSchema,
      example: {
        id: MESSAGE_ID,
        type: 'message',
        role: 'assistant',
        model: 'plauder-en',
        content: [{ type: 'text', text: 'Hello! How can I help?' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 2, output_tokens: 6 },
      },
    },
    'text/event-stream': {
      schema: {
        type: 'string',
        description:
          'With `"stream": true`: `message_start`, then for each content block ' +
          '`content_block_start`, `content_block_delta` (`text_delta` or `input_json_delta`) … and ' +
          '`content_block_stop` (a `ping` after the first start), then `message_delta` with ' +
          'the stop reason and the usage, and `message_stop`. A failure after the stream began ' +
          'is a last `error` event (not counted unless a part was delivered). `: ping` ' +
          'comments come at least every 15 s.',
        example: streamExample(),
      },
    },
  },
} as const;

export const countTokensAnswerSchema = {
  type: 'object',
  description:
    'An estimate of the input tokens (about four characters a token), not counted against the quota.',
  required: ['input_tokens'],
  properties: { input_tokens: { type: 'integer' } },
  examples: [{ input_tokens: 12 }],
} as const;

const MODELS_CREATED_AT = '2026-01-01T00:00:00Z';

const modelExample = (id: string) => ({
  type: 'model',
  id,
  display_name: id === 'plauder-de' ? 'plauder (Deutsch)' : 'plauder (English)',
  created_at: MODELS_CREATED_AT,
});

export const anthropicModelSchema = {
  type: 'object',
  description: "With `anthropic-version`: a model in Anthropic's shape.",
  required: ['type', 'id', 'display_name', 'created_at'],
  properties: {
    type: { type: 'string', const: 'model' },
    id: { type: 'string' },
    display_name: { type: 'string' },
    created_at: { type: 'string' },
  },
  examples: [modelExample('plauder-de')],
} as const;

export const anthropicModelListSchema = {
  type: 'object',
  description: "With `anthropic-version`: the models in Anthropic's list shape.",
  required: ['data', 'has_more', 'first_id', 'last_id'],
  properties: {
    data: { type: 'array', items: anthropicModelSchema },
    has_more: { type: 'boolean' },
    first_id: { type: ['string', 'null'] },
    last_id: { type: ['string', 'null'] },
  },
  examples: [
    {
      data: [modelExample('plauder-de'), modelExample('plauder-en')],
      has_more: false,
      first_id: 'plauder-de',
      last_id: 'plauder-en',
    },
  ],
} as const;

/** A model in Anthropic's shape (`GET /v1/models` with `anthropic-version`). */
export function anthropicModel(id: string) {
  return modelExample(id);
}

export const messagesHeaders = {
  type: 'object',
  properties: {
    'x-api-key': { type: 'string', description: 'The API key (or `Authorization: Bearer`).' },
    'anthropic-version': { type: 'string', description: 'Accepted, any value.' },
    'anthropic-beta': {
      type: 'string',
      description: 'Accepted; no beta feature changes the answer.',
    },
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
