/**
 * @module routes/admin/json-body
 * Request bodies of the admin API. The app keeps every body as raw bytes (see `app.ts`),
 * so admin routes parse theirs here, strictly: Fastify's validator would turn `"false"`
 * into `false` and drop unknown fields, and an operator's typo (`"activ": false`) must
 * fail with 400 instead of half-applying. Schema failures get specific error codes.
 */
import type { FastifySchemaValidationError, preValidationHookHandler } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { ErrorCode } from '../../errors/error-codes.js';
import { parseJsonObject } from '../request-body.js';

interface ObjectSchema {
  readonly properties?: Readonly<Record<string, { readonly type?: unknown }>>;
}

/**
 * Parses the body into a JSON object before validation. `optional`: an empty body
 * means `{}` (for operations whose every field has a default).
 */
export function jsonBody(options: { optional?: boolean } = {}): preValidationHookHandler {
  return async (request) => {
    const raw = request.body;
    const empty = raw === undefined || raw === null || (Buffer.isBuffer(raw) && raw.length === 0);
    if (empty && options.optional) {
      request.body = {};
      return;
    }
    const value = parseJsonObject(request.headers['content-type'], raw);
    if (value === undefined) throw new ApiError('json_invalid');
    const schema = request.routeOptions.schema?.body as ObjectSchema | undefined;
    if (schema && !hasOnlyDeclaredFields(value, schema)) throw new ApiError('fields_invalid');
    request.body = value;
  };
}

/** Every field is declared and has its declared JSON type (the admin bodies are flat). */
function hasOnlyDeclaredFields(value: Record<string, unknown>, schema: ObjectSchema): boolean {
  return Object.entries(value).every(([name, field]) => {
    const declared = schema.properties?.[name];
    return declared !== undefined && jsonType(field) === declared.type;
  });
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** A failed schema check names what was wrong: the key id, the month, or a field. */
export function schemaErrorToApiError(
  errors: FastifySchemaValidationError[],
  part: string,
): ApiError {
  return new ApiError(codeOf(errors[0], part));
}

const FIELD_CODES: Readonly<Record<string, ErrorCode>> = {
  '/name': 'name_invalid',
  '/plan': 'plan_unknown',
  '/grace': 'grace_invalid',
};

/** What a list's query can be refused with. */
export const LIST_REFUSED = [
  'limit_invalid',
  'cursor_invalid',
  'sort_invalid',
  'active_invalid',
  'search_invalid',
  'query_unknown',
] as const;

/** The query parameters of the lists, each with its own code (docs/admin.md). */
const QUERY_CODES: Readonly<Record<string, ErrorCode>> = {
  '/month': 'month_invalid',
  '/limit': 'limit_invalid',
  '/cursor': 'cursor_invalid',
  '/sort': 'sort_invalid',
  '/active': 'active_invalid',
  '/q': 'search_invalid',
  '/plan': 'search_invalid',
};

function codeOf(error: FastifySchemaValidationError | undefined, part: string): ErrorCode {
  if (part === 'params') return 'key_not_found';
  if (part === 'querystring') return QUERY_CODES[error?.instancePath ?? ''] ?? 'fields_invalid';
  return FIELD_CODES[error?.instancePath ?? ''] ?? 'fields_invalid';
}

/**
 * Refuses query parameters the route does not declare (`?page=2` must not silently answer
 * the first page), before validation, which would drop them.
 */
export function knownQuery(): preValidationHookHandler {
  return async (request) => {
    const schema = request.routeOptions.schema?.querystring as ObjectSchema | undefined;
    const query = request.query as Record<string, unknown>;
    if (Object.keys(query).some((name) => schema?.properties?.[name] === undefined))
      throw new ApiError('query_unknown');
  };
}
