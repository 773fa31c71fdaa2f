/**
 * @module routes/admin/admin-schemas
 * JSON schemas of the admin API. Like the public API's, they validate requests, shape the
 * responses (only declared fields are serialised, so a hash can never slip out) and
 * generate the admin part of `/openapi.json`.
 */

import { EVENT_TYPES } from '../../events/events.js';
import { KEY_NAME_MAX } from '../../keys/key-service.js';
import { KEY_SORTS, LIST_LIMIT_DEFAULT, LIST_LIMIT_MAX } from '../../operations/list-query.js';
import type { Plans } from '../../plans/plans.js';

export const adminSecurity = [{ adminToken: [] }];

const MONTH_PATTERN = '^\\d{4}-(0[1-9]|1[0-2])$';

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

const monthParameter = {
  type: 'string',
  pattern: MONTH_PATTERN,
  description: 'A month in the quota time zone, `YYYY-MM`; default: the current month.',
} as const;

/** Paging, search and filters of the admin lists (docs/admin.md, "Lists: paging, search, filters"). */
const listParameters = {
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: LIST_LIMIT_MAX,
    description: `Keys per page, 1-${LIST_LIMIT_MAX}; default ${LIST_LIMIT_DEFAULT}.`,
  },
  cursor: {
    type: 'string',
    minLength: 1,
    maxLength: 400,
    description:
      'Where the page starts: the `page.nextCursor` of the previous answer, with the same `sort` (opaque).',
  },
  q: {
    type: 'string',
    maxLength: KEY_NAME_MAX,
    description: 'Only keys whose name, id or key prefix contains this text (ASCII case ignored).',
  },
  plan: { type: 'string', maxLength: KEY_NAME_MAX, description: 'Only keys on this plan.' },
  active: { type: 'boolean', description: 'Only keys whose plan is active (`true`) or not.' },
  sort: {
    type: 'string',
    enum: [...KEY_SORTS],
    default: 'created',
    description: 'Order: by creation or name, `-` for descending; ties by id. Default `created`.',
  },
} as const;

export const keyListQuery = { type: 'object', properties: listParameters } as const;

export const monthListQuery = {
  type: 'object',
  properties: { month: monthParameter, ...listParameters },
} as const;

const listPage = {
  type: 'object',
  required: ['limit', 'total', 'nextCursor'],
  description: 'How the list was cut into pages.',
  properties: {
    limit: { type: 'integer' },
    total: { type: 'integer', description: 'Keys matching the search and filters, on all pages.' },
    nextCursor: {
      type: ['string', 'null'],
      description: 'The `cursor` of the next page; null on the last page.',
    },
  },
} as const;

const monthUsage = {
  type: 'object',
  required: ['month', 'used', 'limit', 'remaining', 'perMinute'],
  description: "The key's requests this month against its plan's limit.",
  properties: {
    month: { type: 'string' },
    used: { type: 'integer' },
    limit: { type: ['integer', 'null'], description: 'null when the plan is not configured' },
    remaining: { type: ['integer', 'null'] },
    perMinute: {
      type: ['object', 'null'],
      description:
        "The key's requests in the current clock minute against its plan's per-minute limit; null when the plan has none.",
      required: ['limit', 'used', 'remaining'],
      properties: {
        limit: { type: 'integer' },
        used: { type: 'integer' },
        remaining: { type: 'integer' },
      },
    },
    tokens: {
      type: ['object', 'null'],
      description:
        "The key's tokens this month (settled, and reserved by turns still running) against its plan's monthly token budget; null when the plan has none and none were used.",
      required: ['used', 'limit', 'remaining'],
      properties: {
        used: { type: 'integer' },
        limit: { type: ['integer', 'null'] },
        remaining: { type: ['integer', 'null'] },
      },
    },
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
  required: ['month', 'timeZone', 'keys', 'page'],
  properties: {
    month: { type: 'string' },
    timeZone: { type: 'string' },
    keys: { type: 'array', description: "The page's keys.", items: keyViewSchema },
    page: listPage,
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
  required: ['id', 'limit', 'months', 'currentMonth', 'days'],
  properties: {
    id: keyId,
    limit: { type: ['integer', 'null'], description: "The current plan's monthly limit." },
    tokenLimit: {
      type: ['integer', 'null'],
      description: "The current plan's monthly token budget; null when it has none.",
    },
    currentMonth: {
      type: 'object',
      description: 'Today is day `day` of the `days` days of the current month (quota time zone).',
      required: ['day', 'days'],
      properties: {
        day: { type: 'integer', minimum: 1, maximum: 31 },
        days: { type: 'integer', minimum: 28, maximum: 31 },
      },
    },
    months: {
      type: 'array',
      description: 'The last 12 months, oldest first, the current month last.',
      items: {
        type: 'object',
        required: ['month', 'used', 'tokens'],
        properties: {
          month: { type: 'string' },
          used: { type: 'integer' },
          tokens: { type: 'integer', description: 'Tokens (input and output) of the month.' },
        },
      },
    },
    days: {
      type: 'array',
      description:
        'Each day of the current month (quota time zone) from the 1st up to today, in order, with its answered requests (0 for days without any; a refunded request is not counted). Days before the upgrade that introduced per-day counts show 0.',
      items: {
        type: 'object',
        required: ['date', 'used'],
        properties: {
          date: { type: 'string', format: 'date', description: '`YYYY-MM-DD`.' },
          used: { type: 'integer', minimum: 0 },
        },
      },
    },
  },
} as const;

export const monthUsageReportSchema = {
  type: 'object',
  required: ['month', 'timeZone', 'total', 'keys', 'page'],
  properties: {
    month: { type: 'string' },
    timeZone: { type: 'string' },
    total: {
      type: 'integer',
      description:
        'Requests in the month of all keys matching the search and filters, on all pages.',
    },
    totalTokens: {
      type: 'integer',
      description:
        'Tokens of all keys in the month (settled, and reserved by turns still running).',
    },
    page: listPage,
    keys: {
      type: 'array',
      description: "The page's keys.",
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
          tokens: {
            type: ['object', 'null'],
            description:
              "The key's tokens in the month against its plan's monthly token budget; null when the plan has none and none were used.",
            required: ['used', 'limit', 'remaining'],
            properties: {
              used: { type: 'integer' },
              limit: { type: ['integer', 'null'] },
              remaining: { type: ['integer', 'null'] },
            },
          },
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
        required: ['name', 'limit', 'perMinute'],
        properties: {
          name: { type: 'string' },
          limit: { type: 'integer', description: 'Requests per month.' },
          perMinute: {
            type: ['integer', 'null'],
            description: 'Requests per clock minute; null when the plan has no such limit.',
          },
          tokens: {
            type: ['object', 'null'],
            description: "The plan's token budgets and default output cap; null when it has none.",
            required: ['perMonth', 'perMinute', 'perAnswer'],
            properties: {
              perMonth: { type: ['integer', 'null'] },
              perMinute: { type: ['integer', 'null'] },
              perAnswer: { type: 'integer' },
            },
          },
        },
      },
    },
  },
} as const;

export const eventListQuery = {
  type: 'object',
  properties: {
    status: {
      type: 'string',
      enum: ['pending', 'delivered', 'failed'],
      description: 'Only events in this state; default: all.',
    },
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: 500,
      description: 'How many of the latest events (default 50).',
    },
  },
} as const;

export const eventListSchema = {
  type: 'object',
  required: ['receiver', 'counts', 'events'],
  properties: {
    receiver: {
      type: ['object', 'null'],
      description: 'PLAUDER_WEBHOOK_URL and its state; null when no receiver is configured.',
      required: ['url', 'disabled', 'disabledAt', 'disabledReason'],
      properties: {
        url: { type: 'string', description: 'Credentials in the URL are masked.' },
        disabled: {
          type: 'boolean',
          description:
            'True after the receiver answered 410 Gone: nothing is sent until `plauder webhooks enable`.',
        },
        disabledAt: { type: ['string', 'null'], format: 'date-time' },
        disabledReason: { type: ['string', 'null'] },
      },
    },
    counts: {
      type: 'object',
      required: ['pending', 'delivered', 'failed'],
      description: 'Events in the outbox by status (delivered and failed are kept 30 days).',
      properties: {
        pending: { type: 'integer', description: 'Not yet delivered; retried until delivered.' },
        delivered: { type: 'integer', description: 'A 2xx came back.' },
        failed: { type: 'integer', description: 'Retries ran out (after at least 24 h).' },
      },
    },
    events: {
      type: 'array',
      description: 'The latest events, newest first.',
      items: {
        type: 'object',
        required: [
          'id',
          'type',
          'status',
          'attempts',
          'createdAt',
          'nextAttemptAt',
          'lastAttemptAt',
          'lastStatus',
          'lastError',
          'deliveredAt',
          'data',
        ],
        properties: {
          id: { type: 'string', description: 'The `webhook-id` of every attempt.' },
          type: {
            type: 'string',
            enum: [...EVENT_TYPES],
          },
          status: { type: 'string', enum: ['pending', 'delivered', 'failed'] },
          attempts: { type: 'integer' },
          createdAt: timestamp,
          nextAttemptAt: { type: ['string', 'null'], format: 'date-time' },
          lastAttemptAt: { type: ['string', 'null'], format: 'date-time' },
          lastStatus: {
            type: ['integer', 'null'],
            description: "The receiver's HTTP status at the last attempt.",
          },
          lastError: { type: ['string', 'null'], description: 'Why the last attempt failed.' },
          deliveredAt: { type: ['string', 'null'], format: 'date-time' },
          data: {
            type: 'object',
            additionalProperties: true,
            description: "The event's `data`, as sent.",
          },
        },
      },
    },
  },
} as const;
