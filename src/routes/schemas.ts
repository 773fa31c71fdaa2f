/**
 * @module routes/schemas
 * JSON schemas shared by routes. They validate, serialise responses (fast-json-stringify)
 * and generate `/openapi.json`, so the document and the behaviour cannot drift apart.
 */
import { ERROR_CODES } from '../errors/error-codes.js';

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

export const errorRef = { $ref: 'ErrorBody#' } as const;

export const chatRequestSchema = {
  type: 'object',
  required: ['message'],
  properties: {
    message: { type: 'string', minLength: 1, description: 'The user input text.' },
    sessionId: {
      type: 'string',
      pattern: '^[A-Za-z0-9._:@-]{1,128}$',
      description:
        'Enables memory; requests with the same value (under the same key) form one conversation.',
    },
  },
} as const;

export const chatResponseSchema = {
  type: 'object',
  required: ['reply'],
  description:
    'A reply, or a soft error: `reply` is then a friendly sentence and `error` says why.',
  properties: {
    reply: { type: 'string' },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
} as const;

export const bearerSecurity = [{ bearerKey: [] }];

export const sessionIdParams = {
  type: 'object',
  required: ['sessionId'],
  properties: { sessionId: { type: 'string' } },
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
} as const;

export const usageSchema = {
  type: 'object',
  required: ['plan', 'active', 'limit', 'used', 'remaining', 'resetsAt'],
  properties: {
    plan: { type: 'string' },
    active: { type: 'boolean' },
    limit: { type: 'integer' },
    used: { type: 'integer' },
    remaining: { type: 'integer' },
    resetsAt: { type: 'string', format: 'date-time' },
  },
} as const;
