/**
 * Property-based tests of the decision table (docs/contract.md, "Chat endpoints") against one real server:
 * whatever the body, content type, Authorization header or session id, every answer is
 * one of the contract's answers, and the soft error code is the one the table predicts.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { misspelled, startTestServer, type TestServer } from '../helpers/test-server.js';

const LIMIT = 100_000_000;
const BODY_LIMIT = 65_536;
const MESSAGE_MAX = 4000;
const SESSION_ID = /^[A-Za-z0-9._:@-]{1,128}$/;
const SOFT_CODES = [
  'plan_inactive',
  'body_invalid',
  'message_missing',
  'message_invalid',
  'message_too_long',
  'session_id_invalid',
] as const;
const ENDPOINTS = ['/api/chat', '/api/chat-en'] as const;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

type SoftCode = (typeof SOFT_CODES)[number];
type Expected = { status: 413 | 401 } | { status: 200; code: SoftCode | 'reply' };
type Who = 'valid' | 'inactive' | 'invalid';

interface Auth {
  readonly header: string | undefined;
  readonly who: Who;
}

interface ChatCase {
  readonly endpoint: (typeof ENDPOINTS)[number];
  readonly auth: Auth;
  readonly contentType: string | undefined;
  readonly body: Buffer | undefined;
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: any;
}

let server: TestServer;
/** Keys on the `huge` plan: the quota is never the deciding row here. */
const keys = { valid: '', validId: '', inactive: '', revoked: '', rotatedOld: '' };

beforeAll(async () => {
  server = await startTestServer({
    env: { PLAUDER_CORE: 'placeholder', PLAUDER_PLANS: 'standard=1000,plus=5000,huge=100000000' },
  });
  const valid = await server.createKey({ plan: 'huge' });
  keys.valid = valid.key;
  keys.validId = valid.id;
  keys.inactive = (await server.createKey({ plan: 'huge', active: false })).key;
  const revoked = await server.createKey({ plan: 'huge' });
  await server.services.keys.revoke(revoked.id);
  keys.revoked = revoked.key;
  const rotated = await server.createKey({ plan: 'huge' });
  const rotation = await server.services.keys.rotate(rotated.id, 0);
  if (!rotation.ok) throw new Error('rotate failed');
  keys.rotatedOld = rotated.key;
});
afterAll(() => server.close());

async function send(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: Buffer },
): Promise<Answer> {
  const response = await fetch(url, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

function used(): Promise<number> {
  return server.services.usage.used(keys.validId, server.services.quota.monthOf(Date.now()).month);
}

// ---------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------

/** Header values fetch can send: printable ASCII plus some Latin-1. */
const headerText = (maxLength: number) =>
  fc.string({
    unit: fc
      .oneof(
        { arbitrary: fc.integer({ min: 0x20, max: 0x7e }), weight: 9 },
        { arbitrary: fc.integer({ min: 0xa0, max: 0xff }), weight: 1 },
      )
      .map((c) => String.fromCharCode(c)),
    maxLength,
  });

function authArbitrary(): fc.Arbitrary<Auth> {
  const key = keys.valid;
  const spaces = fc.integer({ min: 1, max: 3 }).map((n) => ' '.repeat(n));
  const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'BeArEr');
  const bearer = (k: string) => fc.tuple(scheme, spaces).map(([s, sp]) => `${s}${sp}${k}`);
  const invalid = (header: fc.Arbitrary<string | undefined>) =>
    header.map((h): Auth => ({ header: h, who: 'invalid' }));
  return fc.oneof(
    { arbitrary: bearer(key).map((header): Auth => ({ header, who: 'valid' })), weight: 12 },
    {
      arbitrary: bearer(keys.inactive).map((header): Auth => ({ header, who: 'inactive' })),
      weight: 2,
    },
    { arbitrary: invalid(fc.constant(undefined)), weight: 1 },
    {
      arbitrary: invalid(
        fc.constantFrom(`Basic ${key}`, `Token ${key}`, key, `Bearer:${key}`, `Bearer ${key} x`),
      ),
      weight: 1,
    },
    {
      arbitrary: invalid(fc.constantFrom(`Bearer ${keys.revoked}`, `Bearer ${keys.rotatedOld}`)),
      weight: 1,
    },
    { arbitrary: invalid(headerText(60)), weight: 1 },
    { arbitrary: invalid(headerText(60).map((g) => `Bearer ${g}`)), weight: 1 },
    {
      arbitrary: invalid(fc.nat(key.length - 1).map((n) => `Bearer ${key.slice(0, n)}`)),
      weight: 1,
    },
    {
      // One character changed: the checksum (a CRC32) catches every single-character change.
      arbitrary: invalid(
        fc
          .tuple(fc.nat(key.length - 1), fc.constantFrom(...BASE62))
          .filter(([i, c]) => key[i] !== c)
          .map(([i, c]) => `Bearer ${key.slice(0, i)}${c}${key.slice(i + 1)}`),
      ),
      weight: 2,
    },
    { arbitrary: invalid(fc.constantFrom(...BASE62).map((c) => `Bearer ${key}${c}`)), weight: 1 },
  );
}

const whitespace = fc
  .array(fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0', '\u2003', '\u3000', '\ufeff', '\u2028'), {
    maxLength: 8,
  })
  .map((a) => a.join(''));

const longText = fc
  .tuple(
    fc.integer({ min: MESSAGE_MAX - 3, max: MESSAGE_MAX + 3 }),
    fc.constantFrom('a', 'ä', '😀', '\ud800', ' '),
  )
  .map(([n, c]) => c.repeat(n));

const messageArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }), weight: 6 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.constantFrom('Hallo', 'Hi', ' x ', '\ud800', '\u200b', '0'), weight: 2 },
  { arbitrary: whitespace, weight: 2 },
  { arbitrary: longText, weight: 2 },
  { arbitrary: fc.integer({ min: 4_001, max: 70_000 }).map((n) => 'b'.repeat(n)), weight: 1 },
  // Around the 64 KiB body cap (the JSON around the message is a few bytes).
  {
    arbitrary: fc.integer({ min: BODY_LIMIT - 40, max: BODY_LIMIT + 10 }).map((n) => 'c'.repeat(n)),
    weight: 1,
  },
  { arbitrary: fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null)), weight: 2 },
  {
    arbitrary: fc.oneof(
      fc.array(fc.jsonValue(), { maxLength: 3 }),
      fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
    ),
    weight: 1,
  },
);

const sessionIdArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.stringMatching(/^[A-Za-z0-9._:@-]{1,128}$/), weight: 4 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '',
      'a b',
      '../x',
      'x'.repeat(128),
      'y'.repeat(129),
      'ä',
      'a/b',
      'a\nb',
    ),
    weight: 2,
  },
  {
    arbitrary: fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string(), { maxLength: 2 }),
    ),
    weight: 1,
  },
);

const chatObject = fc
  .record(
    {
      message: messageArbitrary,
      sessionId: sessionIdArbitrary,
      extra: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  )
  .map((o) => Buffer.from(JSON.stringify(o), 'utf8'));

const bodyArbitrary: fc.Arbitrary<Buffer | undefined> = fc.oneof(
  { arbitrary: chatObject, weight: 12 },
  { arbitrary: fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? '', 'utf8')), weight: 2 },
  { arbitrary: chatObject.chain((b) => fc.nat(b.length).map((n) => b.subarray(0, n))), weight: 1 },
  { arbitrary: fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)), weight: 1 },
  {
    arbitrary: fc.string({ unit: 'binary', maxLength: 64 }).map((s) => Buffer.from(s, 'utf8')),
    weight: 1,
  },
  { arbitrary: fc.constant(undefined), weight: 1 },
);

const contentTypeArbitrary: fc.Arbitrary<string | undefined> = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 12 },
  {
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'application/json; charset="UTF-8"',
      'Application/JSON',
      'application/json;',
      'application/json ; x=1',
      'text/plain',
      'text/json',
      'application/jsonp',
      'application/json-patch+json',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'application/json, text/plain',
      '',
      ';',
      'json',
    ),
    weight: 3,
  },
  { arbitrary: fc.constant(undefined), weight: 1 },
  { arbitrary: headerText(40), weight: 1 },
);

function chatCaseArbitrary(): fc.Arbitrary<ChatCase> {
  return fc.record({
    endpoint: fc.constantFrom(...ENDPOINTS),
    auth: authArbitrary(),
    contentType: contentTypeArbitrary,
    body: bodyArbitrary,
  });
}

// ---------------------------------------------------------------------------------------
// The oracle: docs/contract.md, "Chat endpoints", written from the table, first match wins
// ---------------------------------------------------------------------------------------

function expectedAnswer(c: ChatCase): Expected {
  // "may be refused with 413 before it is read": the cap comes before everything else.
  if (c.body !== undefined && c.body.length > BODY_LIMIT) return { status: 413 };
  if (c.auth.who === 'invalid') return { status: 401 }; // row 1
  if (c.auth.who === 'inactive') return { status: 200, code: 'plan_inactive' }; // row 2
  // row 3 cannot match: the limit is 10^8.
  const object = jsonObject(c.contentType, c.body);
  if (object === undefined) return { status: 200, code: 'body_invalid' }; // row 4
  const { message, sessionId } = object;
  if (message === undefined || message === null) return { status: 200, code: 'message_missing' }; // row 5
  if (typeof message !== 'string') return { status: 200, code: 'message_invalid' }; // row 6
  if (/^\s*$/.test(message)) return { status: 200, code: 'message_missing' }; // row 5
  if ([...message].length > MESSAGE_MAX) return { status: 200, code: 'message_too_long' }; // row 7
  // JSON null is read as "no session", as row 5 reads a null message as "no message".
  if (
    sessionId !== undefined &&
    sessionId !== null &&
    !(typeof sessionId === 'string' && SESSION_ID.test(sessionId))
  ) {
    return { status: 200, code: 'session_id_invalid' }; // row 8
  }
  return { status: 200, code: 'reply' }; // row 10 (row 9 cannot match: the placeholder core does not fail)
}

/** A `JSON.parse` reviver that throws on `__proto__` and on `constructor.prototype`. */
function refusePoisoning(key: string, value: unknown): unknown {
  if (key === '__proto__') throw new Error('__proto__ key');
  if (key === 'constructor' && typeof value === 'object' && value !== null && 'prototype' in value)
    throw new Error('constructor.prototype key');
  return value;
}

function jsonObject(
  contentType: string | undefined,
  body: Buffer | undefined,
): Record<string, unknown> | undefined {
  if (contentType === undefined || !/^\s*application\/json\s*(;|$)/i.test(contentType))
    return undefined;
  // A charset other than UTF-8's is refused: the body would be read as what it is not.
  const charset = /;\s*charset\s*=\s*"?([^";]*)"?\s*(;|$)/i.exec(contentType)?.[1]?.trim();
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) return undefined;
  if (body === undefined || body.length === 0) return undefined;
  try {
    // Prototype-poisoning keys are refused like unreadable JSON (SECURITY.md).
    const value: unknown = JSON.parse(
      new TextDecoder('utf-8', { fatal: true }).decode(body),
      refusePoisoning,
    );
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------
// Checking one answer
// ---------------------------------------------------------------------------------------

function expectContractAnswer(c: ChatCase, res: Answer): void {
  const expected = expectedAnswer(c);
  expect([200, 401, 413, 429]).toContain(res.status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.json, `body is JSON: ${res.text.slice(0, 200)}`).toBeTypeOf('object');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-request-id')).toBeTruthy();
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
  expect(res.status).toBe(expected.status);

  if (res.status === 401 || res.status === 413) {
    const code = res.status === 401 ? 'invalid_api_key' : 'payload_too_large';
    expect(res.json).toEqual({
      error: { code, message: expect.any(String), requestId: res.headers.get('x-request-id') },
    });
    expect(res.json.error.message.length).toBeGreaterThan(0);
    if (res.status === 401)
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="plauder"');
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    return;
  }

  expect(res.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
  expect(typeof res.json.reply).toBe('string');
  expect(res.json.reply.trim().length).toBeGreaterThan(0);
  if (expected.status === 200 && expected.code === 'reply') {
    expect(Object.keys(res.json)).toEqual(['reply']);
  } else if (expected.status === 200) {
    expect(res.json).toEqual({
      reply: expect.any(String),
      error: { code: expected.code, message: expect.any(String) },
    });
    expect(SOFT_CODES).toContain(res.json.error.code);
    expect(res.json.error.message.length).toBeGreaterThan(0);
  }
}

function sendChat(c: ChatCase): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (c.auth.header !== undefined) headers.authorization = c.auth.header;
  if (c.contentType !== undefined) headers['content-type'] = c.contentType;
  return send(`${server.url}${c.endpoint}`, {
    method: 'POST',
    headers,
    ...(c.body ? { body: c.body } : {}),
  });
}

function describeCase(c: ChatCase): string {
  const body = c.body === undefined ? '(none)' : c.body.toString('utf8').slice(0, 300);
  return `${c.endpoint} auth=${c.auth.who}:${JSON.stringify(c.auth.header)} ct=${JSON.stringify(c.contentType)} body[${c.body?.length ?? 0}]=${body}`;
}

// ---------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------

describe('POST /api/chat and /api/chat-en with generated requests', () => {
  it('answers every request with the contract answer the decision table predicts', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(chatCaseArbitrary(), async (c) => {
        const res = await sendChat(c);
        const expected = expectedAnswer(c);
        seen.add(expected.status === 200 ? expected.code : String(expected.status));
        try {
          expectContractAnswer(c, res);
        } catch (error) {
          throw new Error(
            `${describeCase(c)}\n-> ${res.status} ${res.text.slice(0, 300)}\n${(error as Error).message}`,
          );
        }
      }),
      { numRuns: 600 },
    );
    // The generators reach every row this server can answer with.
    expect([...seen].sort()).toEqual(['401', '413', 'reply', ...SOFT_CODES].sort());
  });

  it('counts exactly the 200-with-reply answers against the quota, also under concurrency', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(chatCaseArbitrary(), { minLength: 1, maxLength: 6 }),
        async (cases) => {
          const before = await used();
          const answers = await Promise.all(cases.map(sendChat));
          const replies = answers.filter(
            (a) => a.status === 200 && a.json?.error === undefined,
          ).length;
          const predicted = cases.filter((c) => {
            const e = expectedAnswer(c);
            return e.status === 200 && e.code === 'reply' && c.auth.who === 'valid';
          }).length;
          expect(replies).toBe(predicted);
          expect(await used()).toBe(before + replies);
          // The remaining count in the headers agrees with the counter after the batch.
          const remaining = answers.map((a) =>
            Number(a.headers.get('x-ratelimit-remaining') ?? Number.NaN),
          );
          for (const r of remaining.filter((n) => !Number.isNaN(n))) {
            expect(r).toBeGreaterThanOrEqual(LIMIT - (before + replies));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('GET and DELETE /api/sessions/{id} with generated ids and keys', () => {
  it('answers 200/204/401/404 as the session model predicts, never 500, always the envelope', async () => {
    const a = await server.createKey({ plan: 'huge', name: 'sessions a' });
    const b = await server.createKey({ plan: 'huge', name: 'sessions b' });
    /** The sessions that exist, per key: the model the answers are checked against. */
    const live = new Map<string, Set<string>>([
      [a.key, new Set()],
      [b.key, new Set()],
    ]);
    let counter = 0;

    const idArbitrary = fc.oneof(
      // A new session of this length (up to the maximum of 128, with ':' and '@' that a
      // client may percent-encode) is created first, then addressed.
      {
        arbitrary: fc.integer({ min: 1, max: 128 }).map((length) => ({ fresh: length })),
        weight: 3,
      },
      { arbitrary: fc.constant('known'), weight: 3 },
      { arbitrary: fc.stringMatching(/^[A-Za-z0-9._:@-]{1,128}$/), weight: 3 },
      // Path segments over 256 characters are refused by the router (maxParamLength)
      // before any route runs; they are left out here.
      {
        arbitrary: fc.string({ unit: 'grapheme', maxLength: 140 }).filter((id) => id.length <= 256),
        weight: 2,
      },
      {
        arbitrary: fc.constantFrom(
          '',
          '.',
          '..',
          'a b',
          'x'.repeat(129),
          '%',
          '😀',
          'a/b',
          '@'.repeat(128),
        ),
        weight: 1,
      },
    );
    const keyArbitrary = fc.oneof(
      { arbitrary: fc.constantFrom(a.key, b.key), weight: 6 },
      { arbitrary: fc.constantFrom(keys.revoked, misspelled(a.key), 'nope'), weight: 1 },
      { arbitrary: fc.constant(undefined), weight: 1 },
    );

    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            method: fc.constantFrom('GET', 'DELETE'),
            key: keyArbitrary,
            id: idArbitrary,
          }),
          {
            minLength: 1,
            maxLength: 5,
          },
        ),
        async (steps) => {
          for (const step of steps) {
            let id: string;
            if (typeof step.id === 'object') {
              // A new conversation under key a; the same id under key b stays separate.
              const base = `run-${++counter}-`;
              id = `${base}${':@._-'.repeat(26)}`.slice(0, Math.max(base.length, step.id.fresh));
              const created = await send(`${server.url}/api/chat-en`, {
                method: 'POST',
                headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
                body: Buffer.from(JSON.stringify({ message: 'remember me', sessionId: id })),
              });
              expect(created.json).toEqual({ reply: expect.any(String) });
              live.get(a.key)?.add(id);
            } else if (step.id === 'known') {
              id = [...(live.get(a.key) ?? [])].at(-1) ?? 'run-0';
            } else {
              id = step.id;
            }
            const headers: Record<string, string> =
              step.key === undefined ? {} : { authorization: `Bearer ${step.key}` };
            const res = await send(`${server.url}/api/sessions/${encodeURIComponent(id)}`, {
              method: step.method,
              headers,
            });
            const context = `${step.method} ${JSON.stringify(id)} key=${step.key?.slice(0, 12)} -> ${res.status} ${res.text.slice(0, 200)}`;

            expect(res.status, context).not.toBe(500);
            expect([200, 204, 401, 404], context).toContain(res.status);
            expect(res.headers.get('cache-control'), context).toBe('no-store');
            expect(res.headers.get('x-request-id'), context).toBeTruthy();
            if (res.status === 204) expect(res.text).toBe('');
            else if (res.status === 200)
              expect(res.json, context).toEqual({ sessionId: id, turns: expect.any(Array) });
            else {
              expect(res.json, context).toEqual({
                error: {
                  code: expect.any(String),
                  message: expect.any(String),
                  requestId: res.headers.get('x-request-id'),
                },
              });
            }

            const sessions = step.key === undefined ? undefined : live.get(step.key);
            if (!SESSION_ID.test(id) || id === '.' || id === '..') {
              // Not a session id, or one a URL cannot carry ("." and ".." are path steps).
              expect([401, 404], context).toContain(res.status);
            } else if (sessions === undefined) {
              expect(res.status, context).toBe(401);
              expect(res.json.error.code).toBe('invalid_api_key');
              expect(res.headers.get('www-authenticate')).toBe('Bearer realm="plauder"');
            } else if (sessions.has(id)) {
              expect(res.status, context).toBe(step.method === 'GET' ? 200 : 204);
              if (step.method === 'GET')
                expect(res.json.turns[0]).toMatchObject({ message: 'remember me', language: 'en' });
              if (step.method === 'DELETE') sessions.delete(id);
            } else {
              expect(res.status, context).toBe(404);
              expect(res.json.error.code, context).toBe('session_not_found');
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
