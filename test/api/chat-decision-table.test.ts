import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectDeclaredAnswers } from '../helpers/declared-answers.js';
import { type HttpResult, http, startTestServer, type TestServer } from '../helpers/test-server.js';

const ENDPOINTS = [
  { path: '/api/chat', language: 'de' },
  { path: '/api/chat-en', language: 'en' },
] as const;

let server: TestServer;
let key: string;
let keyId: string;

beforeAll(async () => {
  server = await startTestServer({
    env: { PLAUDER_CORE: 'placeholder', PLAUDER_PLANS: 'standard=1000,plus=5000,tiny=2' },
  });
  ({ key, id: keyId } = await server.createKey());
});
afterAll(() => server.close());

function used(id = keyId): Promise<number> {
  return server.services.usage.used(id, server.services.quota.monthOf(Date.now()).month);
}

function expectCommonHeaders(res: HttpResult): void {
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
}

function expectRateLimitHeaders(res: HttpResult, limit: number, remaining: number): void {
  const resetAt = Number(res.headers.get('x-ratelimit-reset'));
  const now = Date.now() / 1000;
  expect(res.headers.get('x-ratelimit-limit')).toBe(String(limit));
  expect(res.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
  expect(resetAt).toBeGreaterThan(now);
  expect(resetAt).toBeLessThanOrEqual(now + 31 * 86_400 + 1);
  expect(res.headers.get('ratelimit-policy')).toMatch(
    new RegExp(`^"monthly";q=${limit};w=(2419200|2505600|2592000|2678400)$`),
  );
  const t = Number(/;t=(\d+)$/.exec(res.headers.get('ratelimit') ?? '')?.[1]);
  expect(res.headers.get('ratelimit')).toBe(`"monthly";r=${remaining};t=${t}`);
  expect(Math.abs(t - (resetAt - now))).toBeLessThanOrEqual(2);
}

function expectErrorBody(res: HttpResult, status: number, code: string): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.json).toEqual({
    error: { code, message: expect.any(String), requestId: res.headers.get('x-request-id') },
  });
  expect(res.json.error.message.length).toBeGreaterThan(0);
}

function expectSoftError(res: HttpResult, code: string, language: 'de' | 'en'): void {
  expect(res.status).toBe(200);
  expect(res.json).toEqual({
    reply: expect.any(String),
    error: { code, message: expect.any(String) },
  });
  expect(res.json.reply.length).toBeGreaterThan(0);
  // The reply speaks the endpoint's language; error.message is English.
  expect(res.json.reply).toMatch(
    language === 'de' ? /\b(du|dein|deine|die|ich|ist|bitte)\b/i : /\b(you|your|the|is|please)\b/i,
  );
}

describe.each(ENDPOINTS)('POST $path', ({ path, language }) => {
  const url = () => `${server.url}${path}`;

  describe('row 1: 401 invalid_api_key, not counted', () => {
    const cases: Array<[string, () => Record<string, string>]> = [
      ['the Authorization header is missing', () => ({})],
      ['the scheme is not Bearer', () => ({ authorization: `Basic ${key}` })],
      ['the bearer token is empty', () => ({ authorization: 'Bearer ' })],
      ['the key is truncated', () => ({ authorization: `Bearer ${key.slice(0, -1)}` })],
      [
        'the checksum does not match',
        () => ({ authorization: `Bearer ${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}` }),
      ],
      [
        'the key is well-formed but unknown',
        () => ({ authorization: 'Bearer plauder_00000000000000000000000000000000000000' }),
      ],
      ['the header carries two tokens', () => ({ authorization: `Bearer ${key} ${key}` })],
    ];
    it.each(cases)('when %s', async (_name, headers) => {
      const before = await used();
      const res = await http(url(), {
        headers: { ...headers(), 'content-type': 'application/json' },
        raw: '{"message":"Hallo"}',
      });
      expectErrorBody(res, 401, 'invalid_api_key');
      expectCommonHeaders(res);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="plauder"');
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      expect(await used()).toBe(before);
    });

    it('when the key is revoked, even with a bad body', async () => {
      const other = await server.createKey();
      await server.services.keys.revoke(other.id);
      const res = await http(url(), { key: other.key, raw: 'not json' });
      expectErrorBody(res, 401, 'invalid_api_key');
    });

    it('accepts the scheme case-insensitively', async () => {
      const res = await http(url(), {
        headers: { authorization: `bearer ${key}` },
        body: { message: 'Hallo' },
      });
      expect(res.status).toBe(200);
    });
  });

  it('row 2: 200 plan_inactive, before quota and body checks, not counted', async () => {
    const inactive = await server.createKey({ active: false });
    const res = await http(url(), { key: inactive.key, raw: '{broken' });
    expectSoftError(res, 'plan_inactive', language);
    expectCommonHeaders(res);
    expectRateLimitHeaders(res, 1000, 1000);
    expect(await used(inactive.id)).toBe(0);
  });

  it('row 3: 429 quota_exceeded with Retry-After, before body checks, not counted', async () => {
    const tiny = await server.createKey({ plan: 'tiny' });
    for (let i = 0; i < 2; i++)
      expect(
        (await http(url(), { key: tiny.key, body: { message: 'Hi' } })).json.reply,
      ).toBeTruthy();
    for (const init of [{ body: { message: 'Hi' } }, { raw: 'not json' }, { body: {} }]) {
      const res = await http(url(), { key: tiny.key, ...init });
      expectErrorBody(res, 429, 'quota_exceeded');
      expectCommonHeaders(res);
      expectRateLimitHeaders(res, 2, 0);
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(
        Math.abs(retryAfter - (Number(res.headers.get('x-ratelimit-reset')) - Date.now() / 1000)),
      ).toBeLessThanOrEqual(2);
    }
    expect(await used(tiny.id)).toBe(2);
  });

  describe('rows 4-8: soft errors, not counted', () => {
    const cases: Array<
      [string, string, { raw?: string | Buffer; body?: unknown; headers?: Record<string, string> }]
    > = [
      [
        'body_invalid',
        'malformed JSON',
        { raw: '{"message": "Hi"', headers: { 'content-type': 'application/json' } },
      ],
      [
        'body_invalid',
        'wrong content type',
        { raw: '{"message":"Hi"}', headers: { 'content-type': 'text/plain' } },
      ],
      ['body_invalid', 'no content type', { raw: '{"message":"Hi"}' }],
      [
        'body_invalid',
        'a __proto__ key (prototype poisoning)',
        {
          raw: '{"message":"Hi","__proto__":{"isAdmin":true}}',
          headers: { 'content-type': 'application/json' },
        },
      ],
      [
        'body_invalid',
        'a constructor.prototype key',
        {
          raw: '{"message":"Hi","constructor":{"prototype":{"isAdmin":true}}}',
          headers: { 'content-type': 'application/json' },
        },
      ],
      ['body_invalid', 'an array', { body: [{ message: 'Hi' }] }],
      ['body_invalid', 'a JSON string', { body: 'Hi' }],
      [
        'body_invalid',
        'JSON null',
        { raw: 'null', headers: { 'content-type': 'application/json' } },
      ],
      [
        'body_invalid',
        'an empty body',
        { raw: '', headers: { 'content-type': 'application/json' } },
      ],
      ['body_invalid', 'no body at all', { headers: { 'content-type': 'application/json' } }],
      [
        'body_invalid',
        'invalid UTF-8',
        {
          raw: Buffer.from('7b226d657373616765223a22ff227d', 'hex'),
          headers: { 'content-type': 'application/json' },
        },
      ],
      ['message_missing', 'message absent', { body: { text: 'Hi' } }],
      ['message_missing', 'message null', { body: { message: null } }],
      ['message_missing', 'message empty', { body: { message: '' } }],
      ['message_missing', 'message whitespace only', { body: { message: ' \n\t ' } }],
      ['message_invalid', 'message a number', { body: { message: 42 } }],
      ['message_invalid', 'message an object', { body: { message: { text: 'Hi' } } }],
      ['message_invalid', 'message an array', { body: { message: ['Hi'] } }],
      ['message_too_long', 'message of 4001 characters', { body: { message: 'a'.repeat(4001) } }],
      ['message_too_long', 'message of 4001 emoji', { body: { message: '😀'.repeat(4001) } }],
      ['session_id_invalid', 'sessionId a number', { body: { message: 'Hi', sessionId: 7 } }],
      ['session_id_invalid', 'sessionId empty', { body: { message: 'Hi', sessionId: '' } }],
      [
        'session_id_invalid',
        'sessionId with a space',
        { body: { message: 'Hi', sessionId: 'a b' } },
      ],
      [
        'session_id_invalid',
        'sessionId of 129 characters',
        { body: { message: 'Hi', sessionId: 'x'.repeat(129) } },
      ],
      [
        'session_id_invalid',
        'sessionId with a slash',
        { body: { message: 'Hi', sessionId: '../etc' } },
      ],
    ];
    it.each(cases)('%s when %s', async (code, _name, init) => {
      const before = await used();
      const res = await http(url(), { key, ...init, method: 'POST' });
      expectSoftError(res, code, language);
      expectCommonHeaders(res);
      expectRateLimitHeaders(res, 1000, 1000 - before);
      expect(await used()).toBe(before);
    });

    it('applies the first matching row: missing message before a bad sessionId', async () => {
      const res = await http(url(), { key, body: { sessionId: 'a b' } });
      expectSoftError(res, 'message_missing', language);
    });

    it('accepts exactly 4000 characters (counted as code points) and unknown fields', async () => {
      const res = await http(url(), { key, body: { message: '😀'.repeat(4000), extra: { a: 1 } } });
      expect(res.status).toBe(200);
      expect(Object.keys(res.json)).toEqual(['reply']);
    });
  });

  // Row 9 (500 when the core fails) is in core-failure.test.ts, with cores that fail.

  it('row 10: 200 with a reply, counted exactly once', async () => {
    const before = await used();
    const res = await http(url(), {
      key,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      raw: JSON.stringify({ message: 'Hallo', sessionId: 'row-10' }),
    });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ reply: expect.any(String) });
    expect(res.json.reply.length).toBeGreaterThan(0);
    expectCommonHeaders(res);
    expectRateLimitHeaders(res, 1000, 1000 - before - 1);
    expect(await used()).toBe(before + 1);
  });
});

describe('outside the chat endpoints', () => {
  it('answers 413 payload_too_large for a body over the hard cap, before reading it', async () => {
    const res = await http(`${server.url}/api/chat`, {
      key,
      headers: { 'content-type': 'application/json' },
      raw: JSON.stringify({ message: 'a'.repeat(70_000) }),
    });
    expectErrorBody(res, 413, 'payload_too_large');
    expectCommonHeaders(res);
  });

  it('answers 404 not_found for unknown routes', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['POST', '/api/chat/extra'],
    ]) {
      const res = await http(`${server.url}${path}`, { method: method as string, key });
      expectErrorBody(res, 404, 'not_found');
      expectCommonHeaders(res);
    }
  });

  it('answers 405 method_not_allowed with Allow for another method on a chat route', async () => {
    for (const [method, path] of [
      ['GET', '/api/chat'],
      ['PUT', '/api/chat-en'],
    ]) {
      const res = await http(`${server.url}${path}`, { method: method as string, key });
      expectErrorBody(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe('POST');
      expectCommonHeaders(res);
    }
  });

  it('takes a well-formed X-Request-Id from the client and ignores a malformed one', async () => {
    const mine = await http(`${server.url}/healthz`, { headers: { 'x-request-id': 'trace-123' } });
    expect(mine.headers.get('x-request-id')).toBe('trace-123');
    const bad = await http(`${server.url}/healthz`, { headers: { 'x-request-id': 'a b\u00e4' } });
    expect(bad.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('sends no CORS headers, also on a preflight', async () => {
    const res = await http(`${server.url}/api/chat`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' },
    });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.status).toBe(405);
  });
});

it('answers only errors that its routes declare', () => expectDeclaredAnswers(server));
