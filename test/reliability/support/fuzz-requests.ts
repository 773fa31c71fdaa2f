/**
 * fast-check arbitraries for whole HTTP requests against the service: methods, paths
 * (routes, session ids, percent-encoding, odd variants, query strings), Authorization
 * values (valid, inactive, exhausted, revoked, rotated, mutated, other schemes,
 * duplicates), content types, bodies (chat objects, random JSON, truncated JSON, invalid
 * UTF-8, UTF-16, BOMs, gzip, deep nesting, sizes around the 64 KiB cap) and extra headers.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { BODY_LIMIT, type FuzzKeys, MESSAGE_MAX, OTHER_KNOWN_METHODS } from './contract-oracle.js';
import type { RawRequest } from './http-client.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_CHARS = `${BASE62}!#$%&'*+-.^_\`|~`;

/** Header values Node sends: tab, printable ASCII and Latin-1. */
const headerText = (maxLength: number) =>
  fc.string({
    unit: fc
      .oneof(
        { arbitrary: fc.integer({ min: 0x20, max: 0x7e }), weight: 12 },
        { arbitrary: fc.integer({ min: 0xa0, max: 0xff }), weight: 1 },
        { arbitrary: fc.constant(0x09), weight: 1 },
      )
      .map((c) => String.fromCharCode(c)),
    maxLength,
  });

const token = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength, maxLength });

function mutate(key: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.nat(key.length - 1).map((n) => key.slice(0, n)),
    fc.constantFrom(...BASE62).map((c) => `${key}${c}`),
    fc
      .tuple(fc.nat(key.length - 1), fc.constantFrom(...BASE62))
      .filter(([i, c]) => key[i] !== c)
      .map(([i, c]) => `${key.slice(0, i)}${c}${key.slice(i + 1)}`),
    fc.constant(key.toUpperCase()),
    fc.constant(key.replace('plauder_', 'plauder-')),
  );
}

function authorization(keys: FuzzKeys): fc.Arbitrary<string | string[] | undefined> {
  const spaces = fc.integer({ min: 1, max: 3 }).map((n) => ' '.repeat(n));
  const scheme = fc.constantFrom('Bearer', 'bearer', 'BEARER', 'BeArEr');
  const bearer = (key: fc.Arbitrary<string>) =>
    fc
      .tuple(scheme, spaces, key, fc.constantFrom('', ' ', '\t'))
      .map(([s, sp, k, t]) => `${s}${sp}${k}${t}`);
  return fc.oneof(
    { arbitrary: bearer(fc.constant(keys.valid)), weight: 20 },
    { arbitrary: bearer(fc.constantFrom(keys.inactive, keys.exhausted)), weight: 3 },
    { arbitrary: bearer(fc.constantFrom(keys.revoked, keys.rotatedOld)), weight: 2 },
    { arbitrary: bearer(mutate(keys.valid)), weight: 2 },
    { arbitrary: fc.constant(undefined), weight: 2 },
    { arbitrary: headerText(80), weight: 1 },
    { arbitrary: headerText(80).map((t) => `Bearer ${t}`), weight: 1 },
    {
      arbitrary: fc
        .constantFrom('Basic', 'Token', 'Digest', 'ApiKey', 'Bearer:', '')
        .map((s) => `${s} ${keys.valid}`.trimStart()),
      weight: 1,
    },
    { arbitrary: fc.constant(`Bearer ${keys.valid} ${keys.valid}`), weight: 1 },
    {
      // Two Authorization lines: the first one counts.
      arbitrary: fc
        .tuple(
          fc.constantFrom(`Bearer ${keys.valid}`, 'Bearer nope', 'Basic x'),
          fc.constantFrom(`Bearer ${keys.valid}`, 'Bearer nope'),
        )
        .map(([a, b]) => [a, b]),
      weight: 1,
    },
  );
}

const contentType: fc.Arbitrary<string | string[] | undefined> = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 14 },
  {
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=utf-16',
      'Application/JSON',
      'application/json;',
      ' application/json ; x=1',
      'application/json, text/plain',
      'text/plain',
      'text/json',
      'application/jsonp',
      'application/json-patch+json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
      '',
      ';',
      'json',
      '*/*',
    ),
    weight: 4,
  },
  { arbitrary: fc.constant(undefined), weight: 1 },
  { arbitrary: headerText(40), weight: 1 },
  { arbitrary: fc.constant<string[]>(['application/json', 'text/plain']), weight: 1 },
  { arbitrary: fc.constant<string[]>(['text/plain', 'application/json']), weight: 1 },
);

/** Bodies of deep nesting, built directly (no recursion in the generator); mostly small. */
const depth = (max: number) =>
  fc.oneof(
    { arbitrary: fc.integer({ min: 50, max: 2_000 }), weight: 9 },
    { arbitrary: fc.integer({ min: 2_000, max }), weight: 1 },
  );
const deep = fc.oneof(
  depth(30_000).map((d) => `${'['.repeat(d)}${']'.repeat(d)}`),
  depth(9_000).map((d) => `${'{"a":'.repeat(d)}1${'}'.repeat(d)}`),
  depth(30_000).map((d) => `${'['.repeat(d)}`),
);

function message(marker: string): fc.Arbitrary<unknown> {
  return fc.oneof(
    { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }), weight: 8 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
    {
      arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }).map((s) => `${s}${marker}${s}`),
      weight: 2,
    },
    {
      arbitrary: fc.constantFrom('Hallo', ' ', '\u00a0\u2003', '\ufeff', '\ud800', '0', ''),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(
          fc.integer({ min: MESSAGE_MAX - 2, max: MESSAGE_MAX + 2 }),
          fc.constantFrom('a', 'ä', '😀'),
        )
        .map(([n, c]) => c.repeat(n)),
      weight: 1,
    },
    { arbitrary: fc.oneof(fc.integer(), fc.double(), fc.boolean(), fc.constant(null)), weight: 2 },
    { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
  );
}

const sessionId: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.stringMatching(/^[A-Za-z0-9._:@-]{1,24}$/), weight: 3 },
  { arbitrary: fc.constantFrom('fuzz-a', 'fuzz-b', 'fuzz-c'), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }), weight: 1 },
  {
    arbitrary: fc.constantFrom('', 'a b', 'x'.repeat(128), 'y'.repeat(129), null, 7, ['a']),
    weight: 1,
  },
);

function chatObject(marker: string): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(
    { message: message(marker), sessionId, extra: fc.jsonValue({ maxDepth: 2 }) },
    { requiredKeys: [] },
  );
}

function body(marker: string): fc.Arbitrary<Buffer | undefined> {
  const utf8 = (text: string) => Buffer.from(text, 'utf8');
  const json = chatObject(marker).map((o) => JSON.stringify(o));
  return fc.oneof(
    { arbitrary: json.map(utf8), weight: 60 },
    { arbitrary: fc.jsonValue().map((v) => utf8(JSON.stringify(v) ?? '')), weight: 2 },
    { arbitrary: json.chain((j) => fc.nat(j.length).map((n) => utf8(j.slice(0, n)))), weight: 2 },
    { arbitrary: fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)), weight: 2 },
    {
      arbitrary: json.map((j) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(j)])),
      weight: 1,
    },
    { arbitrary: json.map((j) => Buffer.from(j, 'utf16le')), weight: 1 },
    { arbitrary: json.map((j) => Buffer.from(j, 'latin1')), weight: 1 },
    { arbitrary: json.map((j) => gzipSync(j)), weight: 1 },
    { arbitrary: fc.constant(utf8('{"message":"\\ud800","x":"\\u0000"}')), weight: 1 },
    { arbitrary: fc.constant(utf8('{"message":"a","message":{"b":1}}')), weight: 1 },
    { arbitrary: deep.map(utf8), weight: 2 },
    { arbitrary: deep.map((d) => utf8(`{"message":${d}}`)), weight: 1 },
    { arbitrary: deep.map((d) => utf8(`{"message":"tief","extra":${d}}`)), weight: 1 },
    {
      // Valid JSON of any size around the cap: padding inside the object.
      arbitrary: fc
        .integer({ min: BODY_LIMIT - 300, max: BODY_LIMIT + 300 })
        .map((n) => utf8(`{"message":"groß",${' '.repeat(Math.max(0, n - 22))}"x":1}`)),
      weight: 1,
    },
    {
      // A message that alone fills the body up to and past the cap.
      arbitrary: fc
        .integer({ min: BODY_LIMIT - 40, max: BODY_LIMIT + 200 })
        .map((n) => utf8(`{"message":"${'c'.repeat(n - 14)}"}`)),
      weight: 1,
    },
    {
      arbitrary: fc.integer({ min: 70_000, max: 400_000 }).map((n) => Buffer.alloc(n, 0x61)),
      weight: 1,
    },
    { arbitrary: fc.constant(undefined), weight: 2 },
    { arbitrary: fc.constant(Buffer.alloc(0)), weight: 1 },
  );
}

const sessionPathId: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom('fuzz-a', 'fuzz-b', 'fuzz-c'), weight: 4 },
  { arbitrary: fc.stringMatching(/^[A-Za-z0-9._:@-]{1,128}$/), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 60 }).map(encodeURIComponent), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '',
      '.',
      '..',
      '%',
      '%zz',
      '%E0%A4%A',
      '%C0%AF',
      '%2F',
      'a%20b',
      '%00',
    ),
    weight: 2,
  },
  { arbitrary: fc.integer({ min: 120, max: 400 }).map((n) => 'x'.repeat(n)), weight: 1 },
  { arbitrary: fc.integer({ min: 40, max: 130 }).map((n) => '%40'.repeat(n)), weight: 1 },
);

const queryString = (keys: FuzzKeys): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: fc.constant(''), weight: 12 },
    {
      arbitrary: fc.constantFrom(
        `?key=${keys.valid}`,
        `?api_key=${keys.valid}`,
        `?access_token=${keys.valid}`,
      ),
      weight: 1,
    },
    { arbitrary: token(0, 20).map((t) => `?${encodeURIComponent(t)}=%zz&a=b&a=c`), weight: 1 },
  );

const randomPath: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '/',
    '/api',
    '/api/',
    '/api/chat/',
    '//api/chat',
    '/API/CHAT',
    '/api/chat%20',
    '/api/chat;x',
    '/api/./chat',
    '/api/../api/chat',
    '/api/chat-EN',
    '/api/sessions',
    '/api/sessions/',
    '/api/sessions/a/b',
    '/api/%63hat',
    '/api/usage/x',
    '/%zz',
    '/healthz/',
    '/admin',
    '/admin/keys',
  ),
  fc
    .array(fc.string({ unit: fc.constantFrom(...`${BASE62}-._~!$&'()*+,;=:@%`), maxLength: 12 }), {
      maxLength: 5,
    })
    .map((segments) => `/${segments.join('/')}`),
);

const chatMethod = fc.oneof(
  { arbitrary: fc.constant('POST'), weight: 30 },
  { arbitrary: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'), weight: 2 },
  { arbitrary: fc.constantFrom(...OTHER_KNOWN_METHODS), weight: 1 },
  { arbitrary: fc.constantFrom('FOO', 'BREW', 'post'), weight: 1 },
);
const readMethod = fc.oneof(
  { arbitrary: fc.constant('GET'), weight: 12 },
  { arbitrary: fc.constantFrom('HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'), weight: 2 },
);
const sessionMethod = fc.oneof(
  { arbitrary: fc.constantFrom('GET', 'DELETE'), weight: 10 },
  { arbitrary: fc.constantFrom('HEAD', 'POST', 'PATCH', 'OPTIONS'), weight: 1 },
);

function target(keys: FuzzKeys): fc.Arbitrary<{ method: string; path: string }> {
  const withQuery = (method: fc.Arbitrary<string>, path: fc.Arbitrary<string>) =>
    fc.record({ method, path: fc.tuple(path, queryString(keys)).map(([p, q]) => `${p}${q}`) });
  return fc.oneof(
    { arbitrary: withQuery(chatMethod, fc.constantFrom('/api/chat', '/api/chat-en')), weight: 30 },
    { arbitrary: withQuery(readMethod, fc.constant('/api/usage')), weight: 3 },
    {
      arbitrary: withQuery(
        sessionMethod,
        sessionPathId.map((id) => `/api/sessions/${id}`),
      ),
      weight: 5,
    },
    {
      arbitrary: withQuery(readMethod, fc.constantFrom('/healthz', '/readyz', '/openapi.json')),
      weight: 1,
    },
    {
      arbitrary: withQuery(fc.constantFrom('GET', 'POST', 'DELETE', 'HEAD'), randomPath),
      weight: 2,
    },
  );
}

const extraHeaders = (keys: FuzzKeys): fc.Arbitrary<Record<string, string | string[]>> =>
  fc.record(
    {
      'x-request-id': fc.oneof(
        fc.stringMatching(/^[A-Za-z0-9._:-]{1,64}$/),
        headerText(80),
        fc.constant<string[]>(['trace-1', 'trace-2']),
        fc.constant(keys.valid),
      ),
      origin: fc.constantFrom('https://evil.example', 'null', 'http://127.0.0.1:3000'),
      'access-control-request-method': fc.constantFrom('POST', 'DELETE'),
      'content-encoding': fc.constantFrom('gzip', 'deflate', 'br', 'identity', 'x-unknown'),
      'accept-encoding': fc.constantFrom('gzip, deflate, br', '*', 'identity;q=0'),
      accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml'),
      'x-api-key': fc.constant(keys.valid),
      cookie: headerText(60),
      'x-forwarded-for': fc.constantFrom('10.0.0.1', '::1, 203.0.113.9', 'unknown'),
      'user-agent': headerText(60),
      'x-fuzz': fc.array(headerText(20), { minLength: 1, maxLength: 3 }),
    },
    { requiredKeys: [] },
  );

/** One request; `framing` decides Content-Length (default), chunked, or a duplicated Content-Length. */
export function fuzzRequest(keys: FuzzKeys, marker: string): fc.Arbitrary<RawRequest> {
  return fc
    .record({
      target: target(keys),
      authorization: authorization(keys),
      contentType,
      body: body(marker),
      // Most requests carry no extra headers: cheaper to make and to send.
      extra: fc.oneof(
        { arbitrary: fc.constant({}), weight: 2 },
        { arbitrary: extraHeaders(keys), weight: 1 },
      ),
      framing: fc.constantFrom(...Array(20).fill('length'), 'chunked', 'chunked', 'duplicate'),
    })
    .map(({ target, authorization, contentType, body, extra, framing }) => {
      const headers: Record<string, string | string[]> = { ...extra };
      if (authorization !== undefined) headers.authorization = authorization;
      if (contentType !== undefined) headers['content-type'] = contentType;
      // GET/HEAD with a body are legal but unusual; keep most of them bodiless.
      const payload = target.method === 'GET' || target.method === 'HEAD' ? undefined : body;
      if (payload !== undefined) {
        if (framing === 'chunked') headers['transfer-encoding'] = 'chunked';
        else if (framing === 'duplicate')
          headers['content-length'] = [String(payload.length), String(payload.length)];
        else headers['content-length'] = String(payload.length);
      }
      return {
        method: target.method,
        path: target.path,
        headers,
        ...(payload === undefined ? {} : { body: payload }),
      };
    });
}

/** A short description of a request for failure messages (bodies cut). */
export function describeRequest(request: RawRequest): string {
  const body =
    request.body === undefined
      ? '(none)'
      : `${request.body.length} B ${JSON.stringify(request.body.subarray(0, 160).toString('latin1'))}`;
  const headers = JSON.stringify(request.headers, (_k, v) =>
    typeof v === 'string' && v.length > 100 ? `${v.slice(0, 100)}…` : v,
  );
  return `${request.method} ${request.path.slice(0, 200)} ${headers} body ${body}`;
}
