/**
 * @module routes/v1/responses/responses-schemas
 * Schemas of `/v1/responses`: they document the routes in `/openapi.json` and serialise
 * their answers, so a response object's schema lets every field of OpenAI's shape through
 * (`additionalProperties`), nulls included.
 */
import { SOFT_ERROR_CODES } from '../../../errors/error-codes.js';
import { REFUSAL_CODES } from '../../refusals.js';
import { type ErrorShape, errorResponsesIn, RATE_LIMIT_HEADERS } from '../../responses.js';
import { MODEL_NOT_FOUND, openAiError, openAiStatus } from '../completion-answer.js';
import { openAiErrorResponses } from '../v1-schemas.js';
import { ITEM_NOT_FOUND, PREVIOUS_NOT_FOUND } from './responses-request.js';

const item = {
  type: 'object',
  required: ['type'],
  properties: {
    type: {
      type: 'string',
      enum: ['message', 'function_call', 'function_call_output', 'item_reference', 'reasoning'],
    },
    role: { type: 'string', enum: ['user', 'assistant', 'system', 'developer'] },
    content: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }] },
    call_id: { type: 'string' },
    name: { type: 'string' },
    arguments: { type: 'string' },
    output: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }] },
    id: { type: 'string' },
  },
} as const;

export const responsesRequestSchema = {
  type: 'object',
  required: ['model', 'input'],
  description:
    "OpenAI's Responses body. `input` is the turn (a string, or items: messages, function " +
    'calls and their outputs, `item_reference`s to items of kept responses); `instructions` ' +
    "follow the operator's system prompt for an LLM core. With an LLM core (`openai`) function " +
    '`tools`, `tool_choice`, `parallel_tool_calls`, `text.format` (json_object, json_schema), ' +
    'function call items and images pass through to the upstream as Chat Completions; other ' +
    'cores refuse them (400 naming the parameter). Hosted tools, `background`, `conversation` ' +
    'and `prompt` are refused on every core. `store` (default true) keeps the response as a ' +
    'turn of a conversation that `previous_response_id` continues. Unknown fields are ignored.',
  properties: {
    model: { type: 'string', enum: ['plauder-de', 'plauder-en'] },
    input: { oneOf: [{ type: 'string' }, { type: 'array', items: item }] },
    instructions: { type: 'string' },
    previous_response_id: { type: 'string' },
    store: { type: 'boolean' },
    stream: { type: 'boolean' },
    tools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'name'],
        properties: {
          type: { type: 'string', const: 'function' },
          name: { type: 'string' },
          description: { type: 'string' },
          parameters: { type: 'object' },
          strict: { type: 'boolean' },
        },
      },
    },
    tool_choice: { oneOf: [{ type: 'string' }, { type: 'object' }] },
    parallel_tool_calls: { type: 'boolean' },
    text: {
      type: 'object',
      properties: {
        format: {
          type: 'object',
          required: ['type'],
          properties: {
            type: { type: 'string', enum: ['text', 'json_object', 'json_schema'] },
            name: { type: 'string' },
            schema: { type: 'object' },
            strict: { type: 'boolean' },
          },
        },
      },
    },
    max_output_tokens: { type: 'integer', minimum: 1 },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    user: { type: 'string' },
    metadata: { type: 'object' },
  },
} as const;

const outputItem = {
  type: 'object',
  required: ['id', 'type', 'status'],
  additionalProperties: true,
  properties: {
    id: { type: 'string' },
    type: { type: 'string', enum: ['message', 'function_call'] },
    status: { type: 'string' },
  },
} as const;

const EXAMPLE = {
  id: 'resp_3b183877208d48a7a2e17d1ef62b23b5',
  object: 'response',
  created_at: 1_795_000_000,
  status: 'completed',
  background: false,
  error: null,
  incomplete_details: null,
  instructions: null,
  max_output_tokens: null,
  metadata: {},
  model: 'plauder-de',
  output: [
    {
      id: 'msg_3b183877208d48a7a2e17d1ef62b23b5',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [
        { type: 'output_text', text: 'Hallo! Wie kann ich helfen?', annotations: [], logprobs: [] },
      ],
    },
  ],
  parallel_tool_calls: true,
  previous_response_id: null,
  store: true,
  temperature: null,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: [],
  top_p: null,
  truncation: 'disabled',
  usage: {
    input_tokens: 4,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 6,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 10,
  },
  user: null,
};

export const responseObjectSchema = {
  type: 'object',
  description:
    "A `response` object in OpenAI's shape: `output` holds a `message` item with " +
    "`output_text` and/or `function_call` items; `usage` is the upstream's token counts " +
    'when it reports them, else an estimate (docs/openai.md).',
  required: ['id', 'object', 'created_at', 'status', 'model', 'output', 'usage'],
  additionalProperties: true,
  properties: {
    id: { type: 'string' },
    object: { type: 'string', const: 'response' },
    created_at: { type: 'integer' },
    status: { type: 'string', enum: ['completed', 'incomplete'] },
    model: { type: 'string' },
    output: { type: 'array', items: outputItem },
    usage: {
      type: 'object',
      additionalProperties: true,
      required: ['input_tokens', 'output_tokens', 'total_tokens'],
      properties: {
        input_tokens: { type: 'integer' },
        output_tokens: { type: 'integer' },
        total_tokens: { type: 'integer' },
      },
    },
  },
  examples: [EXAMPLE],
} as const;

/** A stream of a short reply, as it goes over the wire (the ids and times of EXAMPLE). */
function streamExample(): string {
  const text = 'Hallo! Wie kann ich helfen?';
  const inProgress = { ...EXAMPLE, status: 'in_progress', output: [], usage: null };
  const message = EXAMPLE.output[0] as (typeof EXAMPLE.output)[number];
  const at = { item_id: message.id, output_index: 0, content_index: 0 };
  const part = { type: 'output_text', text: '', annotations: [], logprobs: [] };
  const events: [string, object][] = [
    ['response.created', { response: inProgress }],
    ['response.in_progress', { response: inProgress }],
    [
      'response.output_item.added',
      { output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
    ],
    ['response.content_part.added', { ...at, part }],
    ['response.output_text.delta', { ...at, delta: 'Hallo! ', logprobs: [] }],
    ['response.output_text.delta', { ...at, delta: 'Wie kann ich helfen?', logprobs: [] }],
    ['response.output_text.done', { ...at, text, logprobs: [] }],
    ['response.content_part.done', { ...at, part: { ...part, text } }],
    ['response.output_item.done', { output_index: 0, item: message }],
    ['response.completed', { response: EXAMPLE }],
  ];
  return events
    .map(
      ([type, fields], sequence) =>
        `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...fields })}\n\n`,
    )
    .join('');
}

export const responseAnswerSchema = {
  description: 'A response object, or its events when streamed.',
  content: {
    'application/json': { schema: responseObjectSchema },
    'text/event-stream': {
      schema: {
        type: 'string',
        description:
          'With `"stream": true`: OpenAI\'s events, each with an `event:` line and a ' +
          '`sequence_number`, one response id throughout: `response.created`, ' +
          '`response.in_progress`, `response.output_item.added`, `response.content_part.added`, ' +
          '`response.output_text.delta`…, `response.output_text.done`, ' +
          '`response.content_part.done`, `response.output_item.done` (a function call: ' +
          '`response.output_item.added`, `response.function_call_arguments.delta`… `.done`, ' +
          '`response.output_item.done`), then `response.completed` with the usage. A failure ' +
          'after the stream began ends it with `response.failed`. `: ping` comments come at ' +
          'least every 15 s.',
        example: streamExample(),
      },
    },
  },
} as const;

export const responseIdParams = {
  type: 'object',
  properties: { id: { type: 'string', description: 'The response id, `resp_…`.' } },
} as const;

export const deletedSchema = {
  type: 'object',
  required: ['id', 'object', 'deleted'],
  properties: {
    id: { type: 'string' },
    object: { type: 'string', const: 'response' },
    deleted: { type: 'boolean', const: true },
  },
} as const;

type NotFoundCode = typeof MODEL_NOT_FOUND | typeof PREVIOUS_NOT_FOUND | typeof ITEM_NOT_FOUND;

const NOT_FOUND_EXAMPLES: Readonly<Record<NotFoundCode, readonly [string, string]>> = {
  [MODEL_NOT_FOUND]: [
    'model',
    'The model `gpt-4o` does not exist. Use one of: plauder-de, plauder-en.',
  ],
  [PREVIOUS_NOT_FOUND]: [
    'previous_response_id',
    'No kept response with that previous_response_id: it is unknown, deleted, expired or of another key.',
  ],
  [ITEM_NOT_FOUND]: [
    'input[1].id',
    'No kept item with that id: it belongs to no stored response of this key.',
  ],
};

/** The 404s of `POST /v1/responses`, in OpenAI's error shape. */
const NOT_FOUND: ErrorShape<NotFoundCode> = {
  ref: 'OpenAiError#',
  statusOf: () => 404,
  example: (code) => {
    const [param, message] = NOT_FOUND_EXAMPLES[code];
    return openAiError(code, openAiStatus(MODEL_NOT_FOUND).type, message, param);
  },
  note: " (OpenAI's error shape)",
};

/** As /v1/chat/completions, and the 404s of what a body names that is not kept. */
export const responsesErrors = {
  ...openAiErrorResponses(
    [...SOFT_ERROR_CODES, 'invalid_api_key', 'payload_too_large', ...REFUSAL_CODES],
    { 403: RATE_LIMIT_HEADERS },
  ),
  ...errorResponsesIn(NOT_FOUND, [MODEL_NOT_FOUND, PREVIOUS_NOT_FOUND, ITEM_NOT_FOUND], {
    404: RATE_LIMIT_HEADERS,
  }),
};

/** A kept response read or deleted: only the key and the id can fail. */
export const storedErrors = openAiErrorResponses(['invalid_api_key', 'not_found']);
