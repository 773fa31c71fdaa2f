/**
 * One security matrix run against every key-protected route (OWASP API Top 10 where it
 * applies: broken authentication, broken object-level authorisation, unrestricted
 * resource consumption, security misconfiguration). Every answer in this file is also
 * checked for `Cache-Control: no-store`, an `X-Request-Id`, no CORS headers and, for
 * errors, exactly the envelope with its fixed message. At the end, the logs and the
 * database files must hold none of the keys, message texts or session ids used.
 * The chat table's own 401 cases are in test/api/chat-decision-table.test.ts; the canary
 * of the happy path is in test/security/canary.test.ts.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreAdapter } from '../../src/core/core-adapter.js';
import { createPlaceholderCore } from '../../src/core/placeholder/create-placeholder-core.js';
import { ERROR_MESSAGES, type ErrorCode } from '../../src/errors/error-codes.js';
import { generateKey } from '../../src/keys/key-format.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';
import { createHttpClient, type HttpClient, type RawResponse } from './support/http-client.js';

const MARKER = `Kern-bitte-scheitern-${randomBytes(4).toString('hex')}`;
const INTERNAL_DETAIL = 'SELECT secret FROM internals at /srv/plauder/core.ts:42';

/** Fails on purpose on a marker message, with internals a 500 must not show. */
const placeholder = createPlaceholderCore();
const core: CoreAdapter = {
  name: 'security',
  async reply(request) {
    if (request.message.includes(MARKER)) throw new Error(INTERNAL_DETAIL);
    return placeholder.reply(request);
  },
};

let server: TestServer;
let client: HttpClient;
const keys = {
  a: '',
  aId: '',
  b: '',
  revoked: '',
  rotatedOld: '',
  rotatedNew: '',
  inactive: '',
};
/** Everything that must never reach the logs or the database files. */
const secrets: string[] = [];
const canary = (label: string) => {
  const text = `${label}-${randomBytes(6).toString('hex')}`;
  secrets.push(text);
  return text;
};
const SESSION = canary('sitzung');
let replies = 0;

beforeAll(async () => {
  server = await startTestServer({ core, env: { PLAUDER_LOG_LEVEL: 'trace' } });
  client = createHttpClient(server.url, 4);
  const a = await server.createKey({ name: 'a' });
  keys.a = a.key;
  keys.aId = a.id;
  keys.b = (await server.createKey({ name: 'b' })).key;
  keys.inactive = (await server.createKey({ name: 'inactive', active: false })).key;
  const revoked = await server.createKey({ name: 'revoked' });
  await server.services.keys.revoke(revoked.id);
  keys.revoked = revoked.key;
  const rotated = await server.createKey({ name: 'rotated' });
  const rotation = await server.services.keys.rotate(rotated.id, 0);
  if (!rotation.ok) throw new Error('rotate failed');
  keys.rotatedOld = rotated.key;
  keys.rotatedNew = rotation.value.key;
  for (const key of [keys.a, keys.b, keys.revoked, keys.rotatedOld, keys.rotatedNew, keys.inactive])
    secrets.push(key, key.slice(12));
  // Key a's session, read and deleted (or not) below.
  const created = await send('POST', '/api/chat', bearer(keys.a), {
    message: canary('nachricht'),
    sessionId: SESSION,
  });
  expect(created.json).toEqual({ reply: expect.any(String) });
  replies++;
});
afterAll(async () => {
  client?.close();
  await server?.close();
});

function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

/** Sends a request and checks what every answer must have. */
async function send(
  method: string,
  path: string,
  headers: Record<string, string | string[]> = {},
  body?: unknown,
): Promise<RawResponse> {
  const payload =
    body === undefined
      ? undefined
      : Buffer.isBuffer(body)
        ? body
        : Buffer.from(JSON.stringify(body));
  const res = await client.send({
    method,
    path,
    headers: {
      ...(payload && !headers['content-type'] ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(payload ? { body: payload } : {}),
  });
  expectCommonHeaders(res);
  return res;
}

function expectCommonHeaders(res: RawResponse): void {
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['x-request-id']).toMatch(/^[A-Za-z0-9._:-]{1,64}$/);
  expect(Object.keys(res.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
}

/** Exactly the envelope with the code's fixed message: no internals, no request data. */
function expectError(res: RawResponse, status: number, code: ErrorCode): void {
  expect(res.status, res.text).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.json).toEqual({
    error: { code, message: ERROR_MESSAGES[code], requestId: res.headers['x-request-id'] },
  });
}

function expect401(res: RawResponse): void {
  expectError(res, 401, 'invalid_api_key');
  expect(res.headers['www-authenticate']).toBe('Bearer realm="plauder"');
  expect(res.headers['x-ratelimit-limit']).toBeUndefined();
  expect(res.headers.ratelimit).toBeUndefined();
}

interface RouteCase {
  readonly name: string;
  readonly method: string;
  readonly path: (sessionId: string) => string;
  /** The body of a well-formed request. */
  readonly body?: () => unknown;
  readonly okStatus: number;
}

const ROUTES: RouteCase[] = [
  {
    name: 'POST /api/chat',
    method: 'POST',
    path: () => '/api/chat',
    body: () => ({ message: canary('frage'), sessionId: SESSION }),
    okStatus: 200,
  },
  {
    name: 'POST /api/chat-en',
    method: 'POST',
    path: () => '/api/chat-en',
    body: () => ({ message: canary('question'), sessionId: SESSION }),
    okStatus: 200,
  },
  { name: 'GET /api/usage', method: 'GET', path: () => '/api/usage', okStatus: 200 },
  {
    name: 'GET /api/sessions/{id}',
    method: 'GET',
    path: (id) => `/api/sessions/${id}`,
    okStatus: 200,
  },
  {
    name: 'DELETE /api/sessions/{id}',
    method: 'DELETE',
    path: (id) => `/api/sessions/${id}`,
    okStatus: 204,
  },
];

/** Broken authentication: every way a request can carry no valid key (contract row 1). */
const BROKEN_AUTH: Array<
  [string, () => { headers?: Record<string, string | string[]>; query?: string }]
> = [
  ['the Authorization header is missing', () => ({})],
  [
    'the scheme is Basic',
    () => ({ headers: { authorization: `Basic ${Buffer.from(`${keys.a}:`).toString('base64')}` } }),
  ],
  [
    'the scheme is Basic with the bare key',
    () => ({ headers: { authorization: `Basic ${keys.a}` } }),
  ],
  ['the scheme is Token', () => ({ headers: { authorization: `Token ${keys.a}` } })],
  ['the key has no scheme', () => ({ headers: { authorization: keys.a } })],
  ['the scheme has no token', () => ({ headers: { authorization: 'Bearer' } })],
  ['the bearer token is empty', () => ({ headers: { authorization: 'Bearer ' } })],
  ['the key is in the query string (?key=)', () => ({ query: `?key=${keys.a}` })],
  ['the key is in the query string (?api_key=)', () => ({ query: `?api_key=${keys.a}` })],
  ['the key is in the query string (?access_token=)', () => ({ query: `?access_token=${keys.a}` })],
  ['the key is in an X-API-Key header', () => ({ headers: { 'x-api-key': keys.a } })],
  ['the key is truncated by one character', () => ({ headers: bearer(keys.a.slice(0, -1)) })],
  ['the key is truncated to its display prefix', () => ({ headers: bearer(keys.a.slice(0, 12)) })],
  ['the key has a character appended', () => ({ headers: bearer(`${keys.a}x`) })],
  ['a checksum character is flipped', () => ({ headers: bearer(flip(keys.a, keys.a.length - 1)) })],
  [
    'a random character is flipped (the checksum catches it)',
    () => ({ headers: bearer(flip(keys.a, 20)) }),
  ],
  ['the key is well-formed but was never issued', () => ({ headers: bearer(generateKey()) })],
  ['the key is revoked', () => ({ headers: bearer(keys.revoked) })],
  ['the key was rotated away (no grace)', () => ({ headers: bearer(keys.rotatedOld) })],
  [
    'the key has another service’s format (sk-…)',
    () => ({ headers: bearer(`sk-proj-${randomBytes(24).toString('hex')}`) }),
  ],
  [
    'the token is a JWT',
    () => ({ headers: bearer('eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.c2lnbmF0dXJl') }),
  ],
  [
    'the prefix is upper-cased',
    () => ({ headers: bearer(keys.a.replace('plauder_', 'PLAUDER_')) }),
  ],
  [
    'the header carries two tokens',
    () => ({ headers: { authorization: `Bearer ${keys.a} ${keys.a}` } }),
  ],
  [
    'the key is followed by a no-break space',
    () => ({ headers: { authorization: `Bearer ${keys.a}\u00a0` } }),
  ],
  [
    'the first of two Authorization lines is invalid',
    () => ({ headers: { authorization: ['Bearer nope', `Bearer ${keys.a}`] } }),
  ],
];

function flip(key: string, index: number): string {
  const c = key[index] === 'A' ? 'B' : 'A';
  return `${key.slice(0, index)}${c}${key.slice(index + 1)}`;
}

describe.each(ROUTES)('$name', (route) => {
  it.each(BROKEN_AUTH)(
    'answers 401 invalid_api_key, counts nothing and changes nothing when %s',
    async (_name, make) => {
      const { headers = {}, query = '' } = make();
      const res = await send(
        route.method,
        `${route.path(SESSION)}${query}`,
        headers,
        route.body?.(),
      );
      expect401(res);
    },
  );

  it('answers with a valid key, also with the scheme in lower case (RFC 9110: case-insensitive)', async () => {
    for (const scheme of ['Bearer', 'bearer']) {
      // DELETE needs a session of its own to delete.
      const id = route.method === 'DELETE' ? await newSession(keys.a) : SESSION;
      const res = await send(
        route.method,
        route.path(id),
        { authorization: `${scheme} ${keys.a}` },
        route.body?.(),
      );
      expect(res.status, res.text).toBe(route.okStatus);
      if (route.method === 'POST') {
        expect(res.json).toEqual({ reply: expect.any(String) });
        replies++;
      }
    }
  });

  it('sends no CORS headers to a cross-origin request, and answers a preflight 405 without them', async () => {
    const id = route.method === 'DELETE' ? await newSession(keys.a) : SESSION;
    const res = await send(
      route.method,
      route.path(id),
      { ...bearer(keys.a), origin: 'https://evil.example' },
      route.body?.(),
    );
    expect(res.status).toBe(route.okStatus);
    if (route.method === 'POST') replies++;
    const preflight = await send('OPTIONS', route.path(SESSION), {
      origin: 'https://evil.example',
      'access-control-request-method': route.method,
      'access-control-request-headers': 'authorization, content-type',
    });
    // OPTIONS is no method of the route: 405 with Allow, and still no CORS header.
    expectError(preflight, 405, 'method_not_allowed');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });

  if (route.method === 'GET') {
    it('does not read a body on GET, however large: it answers as usual', async () => {
      const res = await send(
        route.method,
        route.path(SESSION),
        bearer(keys.a),
        Buffer.alloc(70_000, 0x7b),
      );
      expect(res.status).toBe(200);
    });
  } else {
    it.each([
      ['with Content-Length, with a valid key', () => bearer(keys.a), {}],
      ['with Content-Length, without a key', () => ({}), {}],
      ['chunked, with a valid key', () => bearer(keys.a), { 'transfer-encoding': 'chunked' }],
    ])(
      'answers 413 payload_too_large for a body over 64 KiB %s, before anything else',
      async (_n, auth, framing) => {
        const big = Buffer.from(
          JSON.stringify({ message: canary('riesig').padEnd(70_000, 'x'), sessionId: SESSION }),
        );
        const res = await send(
          route.method,
          route.path(SESSION),
          { ...auth(), ...framing, 'content-type': 'application/json' },
          big,
        );
        expectError(res, 413, 'payload_too_large');
      },
    );
  }
});

async function newSession(key: string): Promise<string> {
  const id = canary('weg');
  const res = await send('POST', '/api/chat-en', bearer(key), {
    message: canary('temp'),
    sessionId: id,
  });
  expect(res.json).toEqual({ reply: expect.any(String) });
  replies++;
  return id;
}

describe('object-level authorisation: sessions are per key', () => {
  it('gives key b 404 for key a’s session on GET and DELETE, and a’s session stays as it was', async () => {
    const before = await send('GET', `/api/sessions/${SESSION}`, bearer(keys.a));
    expect(before.status).toBe(200);
    expectError(
      await send('GET', `/api/sessions/${SESSION}`, bearer(keys.b)),
      404,
      'session_not_found',
    );
    expectError(
      await send('DELETE', `/api/sessions/${SESSION}`, bearer(keys.b)),
      404,
      'session_not_found',
    );
    // b's own session under the same id is another conversation.
    const own = await send('POST', '/api/chat', bearer(keys.b), {
      message: canary('fremd'),
      sessionId: SESSION,
    });
    expect(own.status).toBe(200);
    const ofB = await send('GET', `/api/sessions/${SESSION}`, bearer(keys.b));
    expect(ofB.json.turns).toHaveLength(1);
    const after = await send('GET', `/api/sessions/${SESSION}`, bearer(keys.a));
    expect(after.json).toEqual(before.json);
  });

  it('gives an inactive key its own (empty) view: no session of another key, usage of its own', async () => {
    expectError(
      await send('GET', `/api/sessions/${SESSION}`, bearer(keys.inactive)),
      404,
      'session_not_found',
    );
    const usage = await send('GET', '/api/usage', bearer(keys.inactive));
    expect(usage.json).toMatchObject({ active: false, used: 0 });
  });
});

describe('errors never carry internals', () => {
  it('answers a failing core with the bare 500 envelope, whatever the core’s error says', async () => {
    const res = await send('POST', '/api/chat', bearer(keys.a), {
      message: `${canary('kaputt')} ${MARKER}`,
    });
    expectError(res, 500, 'internal_error');
    expect(res.text).not.toMatch(/SELECT|\/srv\/|core\.ts|at \S+ \(/);
    expect(server.logs.join('\n')).not.toContain('SELECT secret');
  });

  it.each([
    ['a broken percent-encoding in the path', 'GET', '/api/sessions/%E0%A4%A', 400, 'bad_request'],
    ['an unknown route', 'GET', '/api/keys', 404, 'not_found'],
    ['an unknown method on a route', 'PUT', '/api/usage', 405, 'method_not_allowed'],
    ['an over-long session id', 'GET', `/api/sessions/${'x'.repeat(300)}`, 404, 'not_found'],
  ] as const)('answers %s with the envelope only', async (_n, method, path, status, code) => {
    expectError(await send(method, path, bearer(keys.a)), status, code);
  });

  it('answers a request the HTTP parser refuses with the envelope, without logging its bytes', async () => {
    const message = canary('roh');
    const raw =
      `POST /api/chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.a}\r\n` +
      `Content-Type: application/json\r\nContent-Length: 40\r\nContent-Length: 41\r\n\r\n{"message":"${message}"}`;
    const answer = await rawExchange(raw);
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/\r\ncache-control: no-store\r\n/i);
    expect(head).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
    expect(JSON.parse(body)).toEqual({
      error: {
        code: 'bad_request',
        message: ERROR_MESSAGES.bad_request,
        requestId: expect.any(String),
      },
    });
  });
});

function rawExchange(text: string): Promise<string> {
  const { port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => {
      answer += chunk;
    });
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
    socket.end(text);
  });
}

describe('request ids', () => {
  it('keeps a client’s own X-Request-Id, but not one that carries a key: request ids are logged', async () => {
    const mine = await send('GET', '/api/usage', { ...bearer(keys.a), 'x-request-id': 'trace-42' });
    expect(mine.headers['x-request-id']).toBe('trace-42');
    const keyAsId = await send('GET', '/api/usage', { ...bearer(keys.a), 'x-request-id': keys.a });
    expect(keyAsId.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('at rest and in the logs (canary)', () => {
  it('counted only the replies: no 401, 404, 413 or 500 above was charged', async () => {
    const usage = await send('GET', '/api/usage', bearer(keys.a));
    expect(usage.json.used).toBe(replies);
  });

  it('holds no key, message text or session id in the database files or the logs (bytes decoded too)', async () => {
    expect(server.logs.length).toBeGreaterThan(100);
    const logs = server.logs.join('\n');
    // Buffers serialised as {"type":"Buffer","data":[...]} would hide text from a plain grep.
    const decoded = [...logs.matchAll(/"data":\[([\d,]+)\]/g)].map((m) =>
      Buffer.from((m[1] ?? '').split(',').map(Number)).toString('latin1'),
    );
    const contents = await server.database.contents();
    for (const secret of secrets) {
      expect(logs.includes(secret), `logs contain ${secret.slice(0, 16)}…`).toBe(false);
      expect(
        decoded.some((d) => d.includes(secret)),
        `logged bytes contain ${secret.slice(0, 16)}…`,
      ).toBe(false);
      expect(
        contents.includes(Buffer.from(secret)),
        `database contains ${secret.slice(0, 16)}…`,
      ).toBe(false);
    }
    console.log(
      `[security] ${secrets.length} canaries absent from ${server.logs.length} log lines ` +
        `and ${contents.length} bytes of database files (${server.database.dialect}); ${replies} replies counted`,
    );
  });
});
