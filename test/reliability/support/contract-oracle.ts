/**
 * The contract as an oracle for arbitrary HTTP requests: which answers (status and code)
 * a request may get, written from the contract's decision table and route list, and the
 * checks every answer must pass (headers, envelope, no internals). Used by the fuzzer.
 */
import {
  ERROR_CODES,
  ERROR_MESSAGES,
  type ErrorCode,
  statusOf,
} from '../../../src/errors/error-codes.js';
import type { RawRequest, RawResponse } from './http-client.js';

export const BODY_LIMIT = 65_536;
export const MESSAGE_MAX = 4000;
const SESSION_ID = /^[A-Za-z0-9._:@-]{1,128}$/;
const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
const BEARER = /^Bearer +([^\s]+) *$/i;
/** Methods whose bodies the server reads (and so may refuse with 413). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
const STANDARD_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** Methods Node's HTTP parser knows but the service has no route for. */
export const OTHER_KNOWN_METHODS = [
  'PROPFIND',
  'SEARCH',
  'PURGE',
  'MKCOL',
  'COPY',
  'MOVE',
  'LOCK',
  'TRACE',
  'REPORT',
  'QUERY',
];
/** Never in an answer: stack frames, source paths, SQL, the deliberate failure's text. */
export const INTERNALS =
  /\bat \S+ \(|\.(ts|js|mjs):\d+|node_modules|SELECT |Sqlite|deliberate failure|\/srv\//;

export interface FuzzKeys {
  readonly valid: string;
  readonly inactive: string;
  readonly exhausted: string;
  readonly revoked: string;
  readonly rotatedOld: string;
}

/**
 * An acceptable answer: the status and what the body says (`error:<code>` for the
 * envelope, `reply`, `soft:<code>`, `usage`, `session`, `ops`, `empty`), or `any` body
 * for paths the oracle does not model exactly.
 */
export interface Outcome {
  readonly status: number;
  readonly body: string;
}

export type Route =
  | { kind: 'chat' }
  | { kind: 'usage' }
  | { kind: 'sessions'; raw: string }
  | { kind: 'ops'; name: string }
  | { kind: 'other' };

/**
 * The route a path addresses, as the service's router sees it: query string ignored,
 * percent-encoded unreserved characters decoded (`/api/%63hat` is `/api/chat`).
 */
export function routeOf(path: string): Route {
  const pathname = routePathname(path);
  if (pathname === '/api/chat' || pathname === '/api/chat-en') return { kind: 'chat' };
  if (pathname === '/api/usage') return { kind: 'usage' };
  if (['/healthz', '/readyz', '/metrics', '/openapi.json'].includes(pathname))
    return { kind: 'ops', name: pathname };
  const session = /^\/api\/sessions\/([^/]*)$/.exec(pathname);
  if (session) return { kind: 'sessions', raw: session[1] ?? '' };
  return { kind: 'other' };
}

/** The path without its query, percent-encoded unreserved characters decoded. */
function routePathname(path: string): string {
  return (path.split('?')[0] ?? '').replace(/%([0-9A-Fa-f]{2})/g, (encoded, hex) => {
    const char = String.fromCharCode(Number.parseInt(hex, 16));
    return /^[A-Za-z0-9\-._~]$/.test(char) ? char : encoded;
  });
}

/** Node keeps the first of duplicate Authorization / Content-Type lines and trims values. */
export function headerValue(request: RawRequest, name: string): string | undefined {
  const value = request.headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first?.replace(/^[ \t]+|[ \t]+$/g, '');
}

/**
 * Requests Node's HTTP parser refuses before any route runs: a method it does not know,
 * two Content-Length lines. The server answers 400 and closes the connection, so the
 * client may see the connection end instead of the answer.
 */
export function isMalformed(request: RawRequest): boolean {
  const method = request.method.toUpperCase();
  if (!STANDARD_METHODS.has(method) && !OTHER_KNOWN_METHODS.includes(method)) return true;
  return Array.isArray(request.headers?.['content-length']);
}

type Who = 'valid' | 'inactive' | 'exhausted' | 'invalid';

function whoIs(request: RawRequest, keys: FuzzKeys): Who {
  const header = headerValue(request, 'authorization');
  const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
  if (token === keys.valid) return 'valid';
  if (token === keys.inactive) return 'inactive';
  if (token === keys.exhausted) return 'exhausted';
  return 'invalid';
}

const error = (code: ErrorCode): Outcome => ({ status: statusOf(code), body: `error:${code}` });
const soft = (code: string): Outcome => ({ status: 200, body: `soft:${code}` });

/** Every answer the contract allows for this request (one, where the contract decides). */
export function allowedOutcomes(request: RawRequest, keys: FuzzKeys, marker: string): Outcome[] {
  // Node's client sends the method upper-cased.
  const method = request.method.toUpperCase();
  const route = routeOf(request.path);
  const tooLarge = (request.body?.length ?? 0) > BODY_LIMIT && BODY_METHODS.has(method);
  const who = whoIs(request, keys);
  const getLike = method === 'GET' || method === 'HEAD';
  if (isMalformed(request)) return [error('bad_request')];
  const large = tooLarge ? [error('payload_too_large')] : [];
  if (!STANDARD_METHODS.has(method)) {
    // Fastify reads the bodies of WebDAV-style methods too.
    const big = (request.body?.length ?? 0) > BODY_LIMIT ? [error('payload_too_large')] : [];
    // On a path with routes: 405 with the methods it has; elsewhere 404.
    return [error('not_found'), error('method_not_allowed'), error('bad_request'), ...big];
  }
  // Outside the chat routes (which judge the body themselves), a body method with a
  // Content-Type Fastify cannot parse is refused as a bad request before the route runs.
  const unparsable =
    BODY_METHODS.has(method) && headerValue(request, 'content-type') !== undefined
      ? [error('bad_request')]
      : [];

  // A percent-encoded path (`/api/%63hat`) reaches no route for the other methods: 404.
  const encoded = request.path.split('?')[0]?.includes('%') ? [error('not_found')] : [];

  switch (route.kind) {
    case 'chat':
      if (method !== 'POST')
        return [error('method_not_allowed'), ...encoded, ...unparsable, ...large];
      if (tooLarge) return [error('payload_too_large')];
      return [chatOutcome(request, who, marker)];
    case 'usage':
      if (!getLike) return [error('method_not_allowed'), ...encoded, ...unparsable, ...large];
      return [who === 'invalid' ? error('invalid_api_key') : { status: 200, body: 'usage' }];
    case 'sessions':
      if (!['GET', 'HEAD', 'DELETE'].includes(method))
        return [
          error('method_not_allowed'),
          // No route at all for an empty or overlong id.
          ...(route.raw.length > 256 || route.raw === '' ? [error('not_found')] : []),
          error('bad_request'),
          ...large,
        ];
      // Refused before the body is read: an overlong id (no route), a broken
      // percent-encoding or an unparsable type.
      if (tooLarge)
        return [
          error('payload_too_large'),
          ...unparsable,
          ...(route.raw.length > 256 ? [error('not_found')] : []),
          ...(decodable(route.raw) ? [] : [error('bad_request')]),
        ];
      return [...sessionOutcomes(method, route.raw, who), ...unparsable];
    case 'ops':
      if (!getLike) return [error('method_not_allowed'), ...encoded, ...unparsable, ...large];
      return [{ status: 200, body: 'ops' }];
    case 'other':
      // Not modelled exactly (a percent-encoded path may still reach a route): any
      // contract answer except a 500.
      return [200, 204, 400, 401, 404, 405, 413, 429].map((status) => ({ status, body: 'any' }));
  }
}

function decodable(raw: string): boolean {
  try {
    decodeURIComponent(raw);
    return true;
  } catch {
    return false;
  }
}

function sessionOutcomes(method: string, raw: string, who: Who): Outcome[] {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    return [error('bad_request')];
  }
  // The router refuses parameters over 256 characters (maxParamLength).
  const overlong = raw.length > 256 ? [error('not_found')] : [];
  if (id === '') return [error('not_found'), error('invalid_api_key'), error('session_not_found')];
  if (who === 'invalid') return [error('invalid_api_key'), ...overlong];
  if (!SESSION_ID.test(id)) return [error('session_not_found'), ...overlong];
  // Whether the session exists depends on earlier (concurrent) requests: both are fine.
  const found: Outcome =
    method === 'DELETE' ? { status: 204, body: 'empty' } : { status: 200, body: 'session' };
  return [found, error('session_not_found'), ...overlong];
}

/** docs/contract.md, "Chat endpoints": first match wins (row 3 only for the exhausted key; row 9 only with the marker). */
function chatOutcome(request: RawRequest, who: Who, marker: string): Outcome {
  if (who === 'invalid') return error('invalid_api_key');
  if (who === 'inactive') return soft('plan_inactive');
  if (who === 'exhausted') return error('quota_exceeded');
  const object = jsonObject(headerValue(request, 'content-type'), request.body);
  if (object === undefined) return soft('body_invalid');
  const { message, sessionId } = object;
  if (message === undefined || message === null) return soft('message_missing');
  if (typeof message !== 'string') return soft('message_invalid');
  if (message.trim().length === 0) return soft('message_missing');
  if ([...message].length > MESSAGE_MAX) return soft('message_too_long');
  if (
    sessionId !== undefined &&
    sessionId !== null &&
    !(typeof sessionId === 'string' && SESSION_ID.test(sessionId))
  )
    return soft('session_id_invalid');
  if (message.includes(marker)) return error('internal_error');
  return { status: 200, body: 'reply' };
}

function jsonObject(
  contentType: string | undefined,
  body: Buffer | undefined,
): Record<string, unknown> | undefined {
  if (contentType === undefined) return undefined;
  const semicolon = contentType.indexOf(';');
  const mediaType = (semicolon === -1 ? contentType : contentType.slice(0, semicolon))
    .trim()
    .toLowerCase();
  if (mediaType !== 'application/json' || body === undefined || body.length === 0) return undefined;
  // JSON said to be in another charset than UTF-8 is not read (it would be misread).
  const charset = /;\s*charset\s*=\s*"?([^";]*)"?\s*(;|$)/i.exec(contentType)?.[1]?.trim();
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) return undefined;
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    // Keys that could pollute prototypes are refused wherever they appear (as Fastify does).
    if (poisoned(value)) return undefined;
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A `__proto__` key, or a `constructor` object with a `prototype`, at any depth (no recursion). */
function poisoned(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value !== 'object' || value === null) continue;
    if (Object.hasOwn(value, '__proto__')) return true;
    const ctor = Object.hasOwn(value, 'constructor')
      ? (value as Record<string, unknown>).constructor
      : undefined;
    if (typeof ctor === 'object' && ctor !== null && Object.hasOwn(ctor, 'prototype')) return true;
    stack.push(...Object.values(value));
  }
  return false;
}

/**
 * Under `/v1` (the OpenAI-compatible front door, docs/contract.md, "OpenAI-compatible door") errors come in OpenAI's
 * envelope, `{"error": {message, type, param, code}}`, with one of our codes and its
 * message. A fuzzed path may land there by chance (a first segment `v1`).
 */
function isOpenAiError(request: RawRequest, json: Record<string, unknown> | undefined): boolean {
  const pathname = routePathname(request.path);
  if (pathname !== '/v1' && !pathname.startsWith('/v1/')) return false;
  const error = json?.error as Record<string, unknown> | undefined;
  const code = error?.code as ErrorCode;
  return (
    ERROR_CODES.includes(code) &&
    typeof error?.type === 'string' &&
    error.type !== '' &&
    JSON.stringify(json) ===
      JSON.stringify({
        error: { message: ERROR_MESSAGES[code], type: error.type, param: null, code },
      })
  );
}

/** What the body of an answer says, in the terms of `Outcome.body`; throws when it is no contract body. */
export function describeBody(request: RawRequest, res: RawResponse): string {
  if (request.method.toUpperCase() === 'HEAD') {
    if (res.body.length !== 0) throw new Error('HEAD answered with a body');
    return 'head';
  }
  if (res.status === 204) {
    if (res.body.length !== 0) throw new Error('204 with a body');
    return 'empty';
  }
  const json = res.json;
  if (res.status !== 200 && isOpenAiError(request, json)) {
    if (!/^application\/json/.test(res.headers['content-type'] ?? ''))
      throw new Error('envelope not sent as JSON');
    return `error:${json?.error?.code as string}`;
  }
  if (res.status !== 200) {
    const code = json?.error?.code as ErrorCode;
    const exact =
      JSON.stringify(json) ===
      JSON.stringify({
        error: { code, message: ERROR_MESSAGES[code], requestId: res.headers['x-request-id'] },
      });
    if (!ERROR_CODES.includes(code) || !exact) throw new Error('not the error envelope');
    if (statusOf(code) !== res.status) throw new Error(`code ${code} with status ${res.status}`);
    if (!/^application\/json/.test(res.headers['content-type'] ?? ''))
      throw new Error('envelope not sent as JSON');
    return `error:${code}`;
  }
  const route = routeOf(request.path);
  if (route.kind === 'ops') {
    if (route.name === '/metrics') {
      if (!res.text.includes('plauder_http_requests_total')) throw new Error('no metrics text');
    } else if (typeof json !== 'object' || json === null) {
      throw new Error('ops answer not JSON');
    }
    return 'ops';
  }
  if (typeof json !== 'object' || json === null) throw new Error('200 without a JSON body');
  const keys = Object.keys(json).join(',');
  if (keys === 'reply' && typeof json.reply === 'string' && json.reply.trim() !== '')
    return 'reply';
  if (keys === 'reply,error' && typeof json.reply === 'string' && json.reply.trim() !== '') {
    const code = json.error?.code;
    if (
      Object.keys(json.error).join(',') !== 'code,message' ||
      json.error.message !== ERROR_MESSAGES[code as ErrorCode]
    )
      throw new Error('soft error without its fixed message');
    return `soft:${code}`;
  }
  if (keys === 'plan,active,limit,used,remaining,resetsAt') return 'usage';
  if (keys === 'sessionId,turns' && Array.isArray(json.turns)) return 'session';
  // `GET /`: where the documentation and the console are.
  if (route.kind === 'other' && keys === 'name,version,docs,openapi,console') return 'any';
  throw new Error('200 with a body the contract does not know');
}

/** The checks every answer must pass, whatever the request; returns the problems found. */
export function commonProblems(request: RawRequest, res: RawResponse): string[] {
  const problems: string[] = [];
  if (res.headers['cache-control'] !== 'no-store')
    problems.push(`cache-control ${res.headers['cache-control']}`);
  const requestId = res.headers['x-request-id'];
  const sent = request.headers?.['x-request-id'];
  // A request the parser refused was never read: its own id is unknown, a fresh one is made.
  // One that carries an API key is not taken over either: request ids are logged.
  const kept =
    typeof sent === 'string' &&
    INCOMING_REQUEST_ID.test(sent.trim()) &&
    !sent.toLowerCase().includes('plauder_') &&
    !isMalformed(request);
  const fresh = typeof requestId === 'string' && /^[0-9a-f-]{36}$/.test(requestId);
  const echoed = typeof sent === 'string' && requestId === sent.trim();
  // Surrounding whitespace: whether the parser strips it (tabs) is Node's business.
  const either = typeof sent === 'string' && sent !== sent.trim();
  if (typeof requestId !== 'string' || requestId.length === 0) problems.push('no x-request-id');
  else if (kept ? !(echoed || (either && fresh)) : !fresh)
    problems.push(`x-request-id ${requestId} for ${JSON.stringify(sent)}`);
  for (const name of Object.keys(res.headers)) {
    if (name.startsWith('access-control-')) problems.push(`CORS header ${name}`);
  }
  if (res.status !== 200 || routeOf(request.path).kind === 'chat') {
    if (INTERNALS.test(res.text)) problems.push('internal detail in the body');
  }
  return problems;
}
