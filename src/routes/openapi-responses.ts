/**
 * @module routes/openapi-responses
 * Completes the generated OpenAPI document where route schemas cannot say it all: each
 * response's description, the error codes a status can carry (an enum, and an example with
 * a code of its own), the response headers (X-Request-Id everywhere, the RateLimit set on
 * authenticated chat answers, Retry-After, WWW-Authenticate, Idempotent-Replayed) and
 * patterns of path parameters. Errors come in two shapes: plauder's envelope (`ErrorBody`)
 * and, under `/v1`, OpenAI's (`OpenAiError`), whose codes take their status from
 * `openAiStatus`. Runs once, as @fastify/swagger's `transformObject`.
 */
import { ERROR_CODES, ERROR_MESSAGES, type ErrorCode, statusOf } from '../errors/error-codes.js';
import { SOFT_REPLIES } from './api/chat/soft-replies.js';
import {
  MODEL_NOT_FOUND,
  type OpenAiErrorCode,
  openAiError,
  openAiStatus,
} from './v1/completion-answer.js';

type Json = Record<string, unknown>;

const REASONS: Readonly<Record<string, string>> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

const ADMIN_ONLY: readonly ErrorCode[] = [
  'admin_unauthorized',
  'json_invalid',
  'fields_invalid',
  'name_invalid',
  'plan_unknown',
  'month_invalid',
  'grace_invalid',
  'key_not_found',
  'key_revoked',
];

/** The codes of one status on one operation, where the default (by status and family) is wrong. */
const CODES: Readonly<Record<string, Readonly<Record<number, readonly ErrorCode[]>>>> = {
  'post /api/chat': chatCodes(),
  'post /api/chat-en': chatCodes(),
  'post /mcp': { 401: ['invalid_api_key'], 413: ['payload_too_large'], 500: ['internal_error'] },
  'get /mcp': { 401: ['invalid_api_key'], 405: ['method_not_allowed'] },
  'delete /mcp': { 401: ['invalid_api_key'], 405: ['method_not_allowed'] },
  'get /api/sessions/{sessionId}': { 404: ['session_not_found'] },
  'delete /api/sessions/{sessionId}': { 404: ['session_not_found'] },
  'get /admin/v1/usage': { 400: ['month_invalid'] },
  'get /admin/v1/events': { 400: ['fields_invalid'] },
  'post /admin/v1/keys': {
    400: ['json_invalid', 'fields_invalid', 'name_invalid', 'plan_unknown'],
  },
  'patch /admin/v1/keys/{id}': {
    400: ['json_invalid', 'fields_invalid', 'name_invalid', 'plan_unknown'],
  },
  'post /admin/v1/keys/{id}/rotate': { 400: ['json_invalid', 'fields_invalid', 'grace_invalid'] },
};

function chatCodes(): Record<number, readonly ErrorCode[]> {
  return {
    400: ['idempotency_key_invalid'],
    401: ['invalid_api_key'],
    409: ['idempotency_key_in_flight'],
    413: ['payload_too_large'],
    422: ['idempotency_key_reused'],
    429: ['quota_exceeded', 'rate_limited', 'too_many_concurrent'],
    500: ['internal_error', 'core_unavailable', 'core_timeout'],
  };
}

/**
 * The codes of each status of the OpenAI-compatible routes. A refused body is 400 with the
 * soft code (and `param`), a model plauder does not offer 404 `model_not_found`, an
 * inactive plan 403; the rest as on /api/chat.
 */
const OPENAI_CODES: Readonly<Record<string, Readonly<Record<number, readonly OpenAiErrorCode[]>>>> =
  {
    'get /v1/models': { 401: ['invalid_api_key'] },
    'get /v1/models/{model}': { 401: ['invalid_api_key'], 404: [MODEL_NOT_FOUND] },
    'post /v1/chat/completions': {
      400: [
        'body_invalid',
        'message_missing',
        'message_invalid',
        'message_too_long',
        'session_id_invalid',
        'idempotency_key_invalid',
      ],
      401: ['invalid_api_key'],
      403: ['plan_inactive'],
      404: [MODEL_NOT_FOUND],
      409: ['idempotency_key_in_flight'],
      413: ['payload_too_large'],
      422: ['idempotency_key_reused'],
      429: ['quota_exceeded', 'rate_limited', 'too_many_concurrent'],
      500: ['internal_error', 'core_unavailable', 'core_timeout'],
    },
  };

/** What `/v1` says where a code's own message would not fit OpenAI's body (param named). */
const OPENAI_EXAMPLES: Readonly<Partial<Record<OpenAiErrorCode, [string | null, string]>>> = {
  model_not_found: [
    'model',
    'The model `gpt-4o` does not exist. Use one of: plauder-de, plauder-en.',
  ],
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

function openAiExample(code: OpenAiErrorCode) {
  const { type } = openAiStatus(code);
  const own = OPENAI_EXAMPLES[code];
  if (own) return openAiError(code, type, own[1], own[0]);
  return openAiError(code, type, ERROR_MESSAGES[code as ErrorCode]);
}

const SOFT_ERROR_CODES = ERROR_CODES.filter((code) => statusOf(code) === 200);

const header = (description: string, schema: Json = { type: 'string' }) => ({
  description,
  schema,
});

const HEADERS: Readonly<Record<string, Json>> = {
  'X-Request-Id': header(
    "The request's id (a client's own well-formed X-Request-Id is kept); also in every log line and error body.",
  ),
  RateLimit: header(
    'What is left: `"monthly";r=<remaining>;t=<seconds to reset>`, and `, "minute";r=..;t=..` for a plan with a per-minute limit (IETF draft-11).',
  ),
  'RateLimit-Policy': header(
    'The limits: `"monthly";q=<limit>;w=<seconds in the month>`, and `, "minute";q=..;w=60` for a plan with a per-minute limit.',
  ),
  'X-RateLimit-Limit': header("Requests per month of the key's plan.", { type: 'integer' }),
  'X-RateLimit-Remaining': header('Requests left this month.', { type: 'integer' }),
  'X-RateLimit-Reset': header('When the month resets, in Unix seconds.', { type: 'integer' }),
  'Retry-After': header(
    'Seconds to wait: until the month resets (quota_exceeded), the minute ends (rate_limited), or 1 (idempotency_key_in_flight, too_many_concurrent).',
    { type: 'integer' },
  ),
  'WWW-Authenticate': header('`Bearer realm="plauder"` (admin routes: `Bearer`).'),
  'Idempotent-Replayed': header(
    '`true` when this is the kept answer of an earlier request with the same Idempotency-Key (not counted again).',
    { type: 'string', enum: ['true'] },
  ),
  Allow: header('The methods the path offers.'),
};

const RATE_LIMIT = [
  'RateLimit',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
];

/** Which headers a status of an operation carries, besides X-Request-Id. */
function headersOf(key: string, status: number, codes: readonly OpenAiErrorCode[]): string[] {
  const names: string[] = [];
  const completions = key === 'post /v1/chat/completions';
  const chat = key === 'post /api/chat' || key === 'post /api/chat-en' || completions;
  if (chat && (status === 200 || status === 429)) names.push(...RATE_LIMIT);
  // Under /v1 an inactive plan and an unknown model are refusals of the turn, after the key.
  if (completions && (status === 403 || status === 404)) names.push(...RATE_LIMIT);
  if (chat && status === 200) names.push('Idempotent-Replayed');
  if (key === 'get /api/usage' && status === 200) names.push(...RATE_LIMIT);
  if (status === 429 || codes.includes('idempotency_key_in_flight')) names.push('Retry-After');
  if (status === 401) names.push('WWW-Authenticate');
  if (status === 405) names.push('Allow');
  return names;
}

/** The error codes a status of an operation can carry. */
function codesOf(key: string, path: string, status: number): readonly ErrorCode[] {
  const own = CODES[key]?.[status];
  if (own) return own;
  const admin = path.startsWith('/admin/');
  return ERROR_CODES.filter(
    (code) =>
      statusOf(code) === status &&
      ADMIN_ONLY.includes(code) === admin &&
      code !== 'not_found' &&
      code !== 'bad_request',
  );
}

const PATH_PATTERNS: Readonly<Record<string, string>> = {
  sessionId: '^[A-Za-z0-9._:@-]{1,128}$',
};

const SUCCESS_EXAMPLES: Readonly<Record<string, unknown>> = {
  'post /api/chat 200': { reply: 'Hallo! Wie kann ich helfen?' },
  'post /api/chat-en 200': { reply: 'Hello! How can I help?' },
  'get /api/usage 200': {
    plan: 'standard',
    active: true,
    limit: 1000,
    used: 12,
    remaining: 988,
    resetsAt: '2026-12-01T00:00:00.000Z',
  },
  'get /api/sessions/{sessionId} 200': {
    sessionId: 'demo-1',
    turns: [
      {
        message: 'Hallo',
        reply: 'Hallo! Wie kann ich helfen?',
        language: 'de',
        createdAt: '2026-11-23T10:00:00.000Z',
      },
    ],
  },
  'post /mcp 200': {
    jsonrpc: '2.0',
    id: 1,
    result: { content: [{ type: 'text', text: 'Hello! How can I help?' }] },
  },
  'post /mcp 400': {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32700, message: 'Parse error: Invalid JSON-RPC message' },
  },
  'post /mcp 406': {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32000,
      message: 'Not Acceptable: Client must accept both application/json and text/event-stream',
    },
  },
  'post /mcp 415': {
    jsonrpc: '2.0',
    id: null,
    error: {
      code: -32000,
      message: 'Unsupported Media Type: Content-Type must be application/json',
    },
  },
  'post /v1/chat/completions 200': {
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
  'get /v1/models 200': {
    object: 'list',
    data: [
      { id: 'plauder-de', object: 'model', created: 1_767_225_600, owned_by: 'plauder' },
      { id: 'plauder-en', object: 'model', created: 1_767_225_600, owned_by: 'plauder' },
    ],
  },
  'get /v1/models/{model} 200': {
    id: 'plauder-de',
    object: 'model',
    created: 1_767_225_600,
    owned_by: 'plauder',
  },
  'get /healthz 200': { status: 'ok' },
  'get /readyz 200': { status: 'ready' },
};

/** Adds what the route schemas cannot say; returns the same document. */
export function completeOpenApi(document: Json): Json {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const key = `${method} ${path}`;
      for (const parameter of (operation.parameters ?? []) as Json[]) {
        const pattern = PATH_PATTERNS[String(parameter.name)];
        const schema = parameter.schema as Json | undefined;
        if (parameter.in === 'path' && pattern && schema && schema.pattern === undefined)
          schema.pattern = pattern;
      }
      const responses = (operation.responses ?? {}) as Record<string, Json>;
      for (const [statusText, response] of Object.entries(responses)) {
        completeResponse(key, path, Number(statusText), response);
      }
    }
  }
  softErrorEnum(paths);
  return document;
}

function completeResponse(key: string, path: string, status: number, response: Json): void {
  const content = response.content as
    | Record<string, { schema?: Json; example?: unknown }>
    | undefined;
  const json = content?.['application/json'];
  const isError = json?.schema?.$ref === '#/components/schemas/ErrorBody';
  const isOpenAiError = json?.schema?.$ref === '#/components/schemas/OpenAiError';
  const codes = isError ? codesOf(key, path, status) : [];
  const openAiCodes = isOpenAiError ? (OPENAI_CODES[key]?.[status] ?? []) : [];
  const listed = (list: readonly string[]) => list.map((c) => `\`${c}\``).join(', ');
  if (isOpenAiError) {
    // The schema's own description ("OpenAI's error shape") says nothing of the status.
    const reason = REASONS[status] ?? String(status);
    response.description = `${reason}: ${listed(openAiCodes)} (OpenAI's error shape)`;
  } else if (!response.description || response.description === 'Default Response') {
    const reason = REASONS[status] ?? String(status);
    response.description = codes.length > 0 ? `${reason}: ${listed(codes)}` : reason;
  }
  if (json && isOpenAiError && openAiCodes.length > 0) {
    json.schema = {
      allOf: [
        { $ref: '#/components/schemas/OpenAiError' },
        {
          type: 'object',
          properties: {
            error: {
              type: 'object',
              properties: { code: { type: 'string', enum: [...openAiCodes] } },
            },
          },
        },
      ],
    };
    (json as Json).examples = Object.fromEntries(
      openAiCodes.map((code) => [code, { summary: code, value: openAiExample(code) }]),
    );
  } else if (json && isError && codes.length > 0) {
    json.schema = {
      allOf: [
        { $ref: '#/components/schemas/ErrorBody' },
        {
          type: 'object',
          properties: {
            error: { type: 'object', properties: { code: { type: 'string', enum: [...codes] } } },
          },
        },
      ],
    };
    const examples: Record<string, Json> = {};
    for (const code of codes) {
      examples[code] = {
        summary: code,
        value: {
          error: {
            code,
            message: ERROR_MESSAGES[code],
            requestId: '3b183877-208d-48a7-a2e1-7d1ef62b23b5',
          },
        },
      };
    }
    (json as Json).examples = examples;
  } else if (json && SUCCESS_EXAMPLES[`${key} ${status}`] !== undefined) {
    json.example = SUCCESS_EXAMPLES[`${key} ${status}`];
  }
  const headers = (response.headers ?? {}) as Record<string, Json>;
  for (const name of ['X-Request-Id', ...headersOf(key, status, [...codes, ...openAiCodes])]) {
    headers[name] ??= HEADERS[name] as Json;
  }
  response.headers = headers;
}

/** The chat answers' soft-error codes as an enum, with an example of each. */
function softErrorEnum(paths: Record<string, Record<string, Json>>): void {
  for (const path of ['/api/chat', '/api/chat-en']) {
    const responses = paths[path]?.post?.responses as Record<string, Json> | undefined;
    const content = responses?.['200']?.content as Record<string, Json> | undefined;
    const json = content?.['application/json'];
    const schema = json?.schema as Json | undefined;
    const error = (schema?.properties as Record<string, Json> | undefined)?.error;
    const code = (error?.properties as Record<string, Json> | undefined)?.code;
    if (!json || !code) continue;
    code.enum = [...SOFT_ERROR_CODES];
    const reply = path === '/api/chat' ? 'Hallo! Wie kann ich helfen?' : 'Hello! How can I help?';
    const soft = SOFT_REPLIES.message_missing[path === '/api/chat' ? 'de' : 'en'];
    json.examples = {
      reply: { summary: 'a reply (counted)', value: { reply } },
      message_missing: {
        summary: 'a soft error (not counted)',
        value: {
          reply: soft,
          error: { code: 'message_missing', message: ERROR_MESSAGES.message_missing },
        },
      },
    };
    delete json.example;
  }
}
