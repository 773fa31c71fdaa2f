/**
 * @module routes/responses
 * What a route declares it answers, next to the route: its error codes, each under the
 * status its error shape gives it, and the headers its answers carry. From these
 * declarations Fastify serialises the answers and `/openapi.json` is generated (the codes
 * of a status as an enum, an example of each), so the document lists no code a route does
 * not declare.
 */
import { STATUS_CODES } from 'node:http';
import { ERROR_MESSAGES, type ErrorCode, statusOf } from '../errors/error-codes.js';

const header = (description: string, type = 'string') => ({ type, description });

const HEADERS = {
  RateLimit: header(
    'What is left: `"monthly";r=<remaining>;t=<seconds to reset>`, and `, "minute";r=..;t=..` for a plan with a per-minute limit (IETF draft-11).',
  ),
  'RateLimit-Policy': header(
    'The limits: `"monthly";q=<limit>;w=<seconds in the month>`, and `, "minute";q=..;w=60` for a plan with a per-minute limit.',
  ),
  'X-RateLimit-Limit': header("Requests per month of the key's plan.", 'integer'),
  'X-RateLimit-Remaining': header('Requests left this month.', 'integer'),
  'X-RateLimit-Reset': header('When the month resets, in Unix seconds.', 'integer'),
  'Retry-After': header(
    'Seconds to wait: until the month resets (quota_exceeded), the minute ends (rate_limited), or 1 (idempotency_key_in_flight, too_many_concurrent).',
    'integer',
  ),
  'WWW-Authenticate': header('`Bearer realm="plauder"` (admin routes: `Bearer`).'),
  'Idempotent-Replayed': {
    ...header(
      '`true` when this is the kept answer of an earlier request with the same Idempotency-Key (not counted again).',
    ),
    enum: ['true'],
  },
  Allow: header('The methods the path offers.'),
} as const;

export type HeaderName = keyof typeof HEADERS;

export const RATE_LIMIT_HEADERS: readonly HeaderName[] = [
  'RateLimit',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
];

/** The headers an answer with one of these codes carries, whichever route gives it. */
const CODE_HEADERS: Readonly<Record<string, readonly HeaderName[]>> = {
  invalid_api_key: ['WWW-Authenticate'],
  admin_unauthorized: ['WWW-Authenticate'],
  quota_exceeded: [...RATE_LIMIT_HEADERS, 'Retry-After'],
  rate_limited: [...RATE_LIMIT_HEADERS, 'Retry-After'],
  too_many_concurrent: ['Retry-After'],
  idempotency_key_in_flight: ['Retry-After'],
  method_not_allowed: ['Allow'],
} satisfies Partial<Record<ErrorCode, readonly HeaderName[]>>;

function headersOf(names: readonly HeaderName[]) {
  return Object.fromEntries([...new Set(names)].map((name) => [name, HEADERS[name]]));
}

/** A success answer's schema, with the headers it carries documented. */
export function withHeaders<Schema extends object>(schema: Schema, names: readonly HeaderName[]) {
  return { ...schema, headers: headersOf(names) };
}

/** How one envelope writes errors: its schema, the status of a code and an example answer. */
export interface ErrorShape<Code extends string> {
  readonly ref: string;
  readonly statusOf: (code: Code) => number;
  readonly example: (code: Code) => object;
  /** Said after the codes in each description. */
  readonly note?: string;
  /** Where the codes of a status show in the body; default `error.code`. */
  readonly codesSchema?: (codes: readonly Code[]) => object;
}

const REQUEST_ID_EXAMPLE = '3b183877-208d-48a7-a2e1-7d1ef62b23b5';

/**
 * Codes a route may answer with a second status: a core whose upstreams all rest (their
 * circuit breakers open) refuses a turn at once with 503 and `Retry-After` instead of 500
 * (docs/core.md, "Several upstreams").
 */
const ALSO_ANSWERED: Readonly<
  Partial<Record<string, { readonly status: number; readonly headers: readonly HeaderName[] }>>
> = { core_unavailable: { status: 503, headers: ['Retry-After'] } };

/** plauder's envelope, `{"error": {"code", "message", "requestId"}}` (errors/api-error.ts). */
const ENVELOPE: ErrorShape<ErrorCode> = {
  ref: 'ErrorBody#',
  statusOf,
  example: (code) => ({
    error: { code, message: ERROR_MESSAGES[code], requestId: REQUEST_ID_EXAMPLE },
  }),
};

/** The error answers of a route in plauder's envelope: one response per status. */
export function errorResponses(codes: readonly ErrorCode[]) {
  return errorResponsesIn(ENVELOPE, codes);
}

/**
 * The error answers of a route in `shape`: one response per status, with its codes as an
 * enum and an example of each; `extra` adds headers a status carries on this route only.
 */
export function errorResponsesIn<Code extends string>(
  shape: ErrorShape<Code>,
  codes: readonly Code[],
  extra: Readonly<Partial<Record<number, readonly HeaderName[]>>> = {},
) {
  const byStatus = new Map<number, Code[]>();
  const alsoHeaders = new Map<number, readonly HeaderName[]>();
  for (const code of codes) {
    const status = shape.statusOf(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    const also = ALSO_ANSWERED[code];
    if (also) {
      byStatus.set(also.status, [...(byStatus.get(also.status) ?? []), code]);
      alsoHeaders.set(also.status, also.headers);
    }
  }
  const responses: Record<number, object> = {};
  for (const [status, list] of byStatus) {
    const named = list.map((code) => `\`${code}\``).join(', ');
    const headers = [
      ...list.flatMap((code) => CODE_HEADERS[code] ?? []),
      ...(extra[status] ?? []),
      ...(alsoHeaders.get(status) ?? []),
    ];
    const codes = shape.codesSchema?.(list) ?? {
      type: 'object',
      properties: {
        error: { type: 'object', properties: { code: { type: 'string', enum: list } } },
      },
    };
    responses[status] = {
      description: `${STATUS_CODES[status]}: ${named}${shape.note ?? ''}`,
      headers: headersOf(headers),
      content: {
        'application/json': {
          schema: { allOf: [{ $ref: shape.ref }, codes] },
          examples: Object.fromEntries(
            list.map((name) => [name, { summary: name, value: shape.example(name) }]),
          ),
        },
      },
    };
  }
  return responses;
}

type Json = Record<string, unknown>;

const REQUEST_ID_HEADER = {
  description:
    "The request's id (a client's own well-formed X-Request-Id is kept); also in every log line and error body.",
  schema: { type: 'string' },
};

const isJson = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/**
 * Gives every response of the generated document `X-Request-Id` (every answer carries it)
 * and a description (the status's reason where the route's schema has none).
 */
export function completeResponses<Document extends { paths?: object }>(document: Document) {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(isJson(operations) ? operations : {})) {
      const responses = isJson(operation) && isJson(operation.responses) ? operation.responses : {};
      for (const [status, response] of Object.entries(responses)) {
        if (!isJson(response)) continue;
        if (!response.description || response.description === 'Default Response') {
          response.description = STATUS_CODES[status] ?? status;
        }
        const own = isJson(response.headers) ? response.headers : {};
        response.headers = { 'X-Request-Id': REQUEST_ID_HEADER, ...own };
      }
    }
  }
  return document;
}
