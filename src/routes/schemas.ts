/**
 * @module routes/schemas
 * JSON schemas shared by routes. They validate, serialise responses (fast-json-stringify)
 * and generate `/openapi.json`, so the document and the behaviour cannot drift apart.
 */
import { ERROR_CODES, ERROR_MESSAGES, SOFT_ERROR_CODES } from '../errors/error-codes.js';
import { SESSION_ID_PATTERN } from '../sessions/session-service.js';
import { RATE_LIMIT_HEADERS, withHeaders } from './responses.js';

export const errorBodySchema = {
  $id: 'ErrorBody',
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'requestId'],
      properties: {
        code: { type: 'string', enum: [...ERROR_CODES] },
        message: { type: 'string' },
        requestId: { type: 'string' },
      },
    },
  },
} as const;

export const chatRequestSchema = {
  type: 'object',
  required: ['message'],
  properties: {
    message: { type: 'string', minLength: 1, description: 'The user input text.' },
    sessionId: {
      type: 'string',
      pattern: SESSION_ID_PATTERN.source,
      description:
        'Enables memory; requests with the same value (under the same key) form one conversation.',
    },
    stream: {
      type: 'boolean',
      description:
        '`true` asks for the reply as a stream of events (as does `Accept: text/event-stream`).',
    },
  },
} as const;

const chatResponseSchema = {
  type: 'object',
  required: ['reply'],
  description:
    'A reply, or a soft error: `reply` is then a friendly sentence and `error` says why.',
  properties: {
    reply: { type: 'string' },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: SOFT_ERROR_CODES },
        message: { type: 'string' },
      },
    },
  },
} as const;

/** The events of a streamed `/api/chat` answer, for the OpenAPI document (docs/contract.md, "Streamed replies"). */
const chatEventStreamSchema = {
  type: 'string',
  description:
    'Server-Sent Events, sent when the request has `Accept: text/event-stream` or ' +
    '`"stream": true` and every check before the core has passed (each earlier refusal ' +
    'answers as JSON, exactly as without streaming). Events: `event: delta` with ' +
    '`data: {"text": "..."}`, one or more, whose texts joined are the reply; then `event: done` ' +
    'with `data: {"reply": "<the whole reply>"}` (counted once, here), or `event: error` with ' +
    '`data: {"error": {"code", "message", "requestId"}}` when the core failed after the ' +
    'stream began (not counted, nothing stored). A `: ping` comment comes at least every 15 s ' +
    'while nothing else is sent. A replayed idempotent reply is one delta, then done.',
  example:
    'event: delta\ndata: {"text":"Hallo! "}\n\nevent: delta\ndata: {"text":"Wie kann ich helfen?"}\n\n' +
    'event: done\ndata: {"reply":"Hallo! Wie kann ich helfen?"}\n\n',
} as const;

/** A chat answer: JSON, or the event stream when one was asked for; examples in its language. */
export function chatAnswerSchema(reply: string, softReply: string) {
  const softError = { code: 'message_missing', message: ERROR_MESSAGES.message_missing };
  const examples = {
    reply: { summary: 'a reply (counted)', value: { reply } },
    message_missing: {
      summary: 'a soft error (not counted)',
      value: { reply: softReply, error: softError },
    },
  };
  const answer = {
    description: 'A reply or soft error as JSON, or the reply as an event stream.',
    content: {
      'application/json': { schema: chatResponseSchema, examples },
      'text/event-stream': { schema: chatEventStreamSchema },
    },
  };
  return withHeaders(answer, [...RATE_LIMIT_HEADERS, 'Idempotent-Replayed']);
}

export const bearerSecurity = [{ bearerKey: [] }];

/** Documents the optional `Idempotency-Key` request header of the chat front doors. */
export const idempotencyKeyHeader = {
  type: 'object',
  properties: {
    accept: {
      type: 'string',
      description:
        '`text/event-stream` asks for the reply as a stream of events (as does `"stream": true` in the body).',
    },
    'idempotency-key': {
      type: 'string',
      minLength: 1,
      maxLength: 257,
      description:
        'Makes a retry safe: 1-255 printable ASCII characters, bare or as a quoted string. ' +
        'A repeat with the same key, endpoint and body within PLAUDER_IDEMPOTENCY_TTL (24 h) ' +
        'gets the first reply again, with `Idempotent-Replayed: true`, and is not counted (soft ' +
        'errors and refusals are not kept: a retry gets them afresh); ' +
        'another body or endpoint gets 422 `idempotency_key_reused`, a repeat while the first ' +
        'still runs 409 `idempotency_key_in_flight` with `Retry-After: 1`.',
    },
  },
} as const;

export const sessionIdParams = {
  type: 'object',
  required: ['sessionId'],
  properties: { sessionId: { type: 'string', pattern: SESSION_ID_PATTERN.source } },
} as const;

export const sessionSchema = {
  type: 'object',
  required: ['sessionId', 'turns'],
  properties: {
    sessionId: { type: 'string' },
    turns: {
      type: 'array',
      items: {
        type: 'object',
        required: ['message', 'reply', 'language', 'createdAt'],
        properties: {
          message: { type: 'string' },
          reply: { type: 'string' },
          language: { type: 'string', enum: ['de', 'en'] },
          createdAt: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
  examples: [
    {
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
  ],
} as const;

/** One token budget's window in `/api/usage`. */
const tokenWindowSchema = {
  type: 'object',
  required: ['limit', 'used', 'remaining', 'resetsAt'],
  properties: {
    limit: { type: 'integer' },
    used: { type: 'integer' },
    remaining: { type: 'integer' },
    resetsAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const usageSchema = {
  type: 'object',
  required: ['plan', 'active', 'limit', 'used', 'remaining', 'resetsAt'],
  properties: {
    plan: { type: 'string' },
    active: { type: 'boolean' },
    limit: { type: 'integer', description: 'Requests per month.' },
    used: { type: 'integer' },
    remaining: { type: 'integer' },
    resetsAt: { type: 'string', format: 'date-time' },
    perMinute: {
      type: 'object',
      description:
        "The plan's per-minute limit in the current clock minute; absent when the plan has none.",
      required: ['limit', 'used', 'remaining', 'resetsAt'],
      properties: {
        limit: { type: 'integer' },
        used: { type: 'integer' },
        remaining: { type: 'integer' },
        resetsAt: { type: 'string', format: 'date-time' },
      },
    },
    tokens: {
      type: 'object',
      description:
        "The plan's token budgets, input and output together (settled and still reserved tokens); absent when the plan has none.",
      properties: {
        monthly: tokenWindowSchema,
        perMinute: tokenWindowSchema,
      },
    },
  },
  examples: [
    {
      plan: 'standard',
      active: true,
      limit: 1000,
      used: 12,
      remaining: 988,
      resetsAt: '2026-12-01T00:00:00.000Z',
    },
  ],
} as const;
