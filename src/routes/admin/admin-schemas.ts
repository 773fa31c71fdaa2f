/**
 * @module routes/admin/admin-schemas
 * JSON schemas of the admin API. Like the public API's, they validate requests, shape the
 * responses (only declared fields are serialised, so a hash can never slip out) and
 * generate the admin part of `/openapi.json`.
 */
import type { Plans } from '../../config/plans.js';
import { KEY_NAME_MAX } from '../../keys/key-service.js';

export const adminSecurity = [{ adminToken: [] }];

export const MONTH_PATTERN = '^\\d{4}-(0[1-9]|1[0-2])$';

const keyId = {
  type: 'string',
  pattern: '^key_[0-9a-z]{1,64}$',
  description: 'The public id of a key (`key_...`).',
} as const;

const timestamp = { type: 'string', format: 'date-time' } as const;

export const keyIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: keyId },
} as const;

export const monthQuery = {
  type: 'object',
  properties: {
    month: {
      type: 'string',
      pattern: MONTH_PATTERN,
      description: 'A month in the quota time zone, `YYYY-MM`; default: the current month.',
    },
  },
} as const;

const monthUsage = {
  type: 'object',
  required: ['month', 'used', 'limit', 'remaining'],
  description: "The key's requests this month against its plan's limit.",
  properties: {
    month: { type: 'string' },
    used: { type: 'integer' },
    limit: { type: ['integer', 'null'], description: 'null when the plan is not configured' },
    remaining: { type: ['integer', 'null'] },
  },
} as const;

const keyViewProperties = {
  id: keyId,
  name: { type: 'string' },
  plan: { type: 'string' },
  active: { type: 'boolean', description: 'Whether the plan is active (inactive: soft error).' },
  status: { type: 'string', enum: ['active', 'inactive', 'revoked'] },
  displayPrefix: {
    type: 'string',
    description: 'The first characters of the current secret, to recognise it; not secret.',
  },
  createdAt: timestamp,
  updatedAt: timestamp,
  revokedAt: { type: ['string', 'null'], format: 'date-time' },
  usage: monthUsage,
} as const;

const keyViewRequired = Object.keys(keyViewProperties);

export const keyViewSchema = {
  type: 'object',
  required: keyViewRequired,
  description: 'A key without its secret.',
  properties: keyViewProperties,
} as const;

export const keyListSchema = {
  type: 'object',
  required: ['month', 'timeZone', 'keys'],
  properties: {
    month: { type: 'string' },
    timeZone: { type: 'string' },
    keys: { type: 'array', items: keyViewSchema },
  },
} as const;

const plaintextKey = {
  type: 'string',
  description: 'The new secret key. Shown only in this response: store it like a password.',
} as const;

export const createdKeySchema = {
  type: 'object',
  required: [...keyViewRequired, 'key'],
  properties: { ...keyViewProperties, key: plaintextKey },
} as const;

export const rotatedKeySchema = {
  type: 'object',
  required: [...keyViewRequired, 'key', 'previousKeyExpiresAt'],
  properties: {
    ...keyViewProperties,
    key: plaintextKey,
    previousKeyExpiresAt: {
      ...timestamp,
      description: 'The secrets before this rotation are refused from this instant on.',
    },
  },
} as const;

export function createKeyBody(plans: Plans) {
  return {
    type: 'object',
    required: ['name', 'plan'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: KEY_NAME_MAX },
      plan: { type: 'string', enum: [...plans.keys()] },
      active: { type: 'boolean', default: true, description: 'Default true.' },
    },
  } as const;
}

export function updateKeyBody(plans: Plans) {
  return {
    type: 'object',
    minProperties: 1,
    additionalProperties: false,
    description: 'The fields to change; at least one.',
    properties: {
      name: { type: 'string', minLength: 1, maxLength: KEY_NAME_MAX },
      plan: { type: 'string', enum: [...plans.keys()] },
      active: { type: 'boolean' },
    },
  } as const;
}

export const rotateKeyBody = {
  type: 'object',
  additionalProperties: false,
  description: 'Optional; an empty body rotates without grace.',
  properties: {
    grace: {
      type: 'string',
      maxLength: 32,
      description:
        'How long the old secret stays valid, e.g. `30m`, `24h`, `7d` (at most `365d`); default `0` (refused at once).',
    },
  },
} as const;

export const keyHistorySchema = {
  type: 'object',
  required: ['id', 'limit', 'months'],
  properties: {
    id: keyId,
    limit: { type: ['integer', 'null'], description: "The current plan's monthly limit." },
    months: {
      type: 'array',
      description: 'The last 12 months, oldest first, the current month last.',
      items: {
        type: 'object',
        required: ['month', 'used'],
        properties: { month: { type: 'string' }, used: { type: 'integer' } },
      },
    },
  },
} as const;

export const monthUsageReportSchema = {
  type: 'object',
  required: ['month', 'timeZone', 'total', 'keys'],
  properties: {
    month: { type: 'string' },
    timeZone: { type: 'string' },
    total: { type: 'integer', description: 'Requests of all keys in the month.' },
    keys: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'name', 'plan', 'status', 'used', 'limit'],
        properties: {
          id: keyId,
          name: { type: 'string' },
          plan: { type: 'string' },
          status: keyViewProperties.status,
          used: { type: 'integer' },
          limit: { type: ['integer', 'null'] },
        },
      },
    },
  },
} as const;

export const planListSchema = {
  type: 'object',
  required: ['plans'],
  properties: {
    plans: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'limit'],
        properties: {
          name: { type: 'string' },
          limit: { type: 'integer', description: 'Requests per month.' },
        },
      },
    },
  },
} as const;
