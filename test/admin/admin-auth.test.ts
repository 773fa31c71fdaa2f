/**
 * Who may use the admin API: nobody when PLAUDER_ADMIN_TOKEN is unset (every /admin path
 * is 404), and only bearers of the token when it is set (401 otherwise, before any body
 * is read). Neither the token nor a key ever reaches the logs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startTestServer, type TestServer } from '../helpers/test-server.js';
import { ADMIN_TOKEN, admin, startAdminServer } from './admin-client.js';

/** Every admin API route with a request that would succeed with the token. */
const OPERATIONS: ReadonlyArray<{ method: string; path: string; body?: unknown }> = [
  { method: 'GET', path: 'keys' },
  { method: 'POST', path: 'keys', body: { name: 'x', plan: 'standard' } },
  { method: 'GET', path: 'keys/{id}' },
  { method: 'PATCH', path: 'keys/{id}', body: { active: false } },
  { method: 'POST', path: 'keys/{id}/rotate' },
  { method: 'POST', path: 'keys/{id}/revoke' },
  { method: 'GET', path: 'keys/{id}/usage' },
  { method: 'GET', path: 'usage' },
  { method: 'GET', path: 'plans' },
];

describe('admin API and console without PLAUDER_ADMIN_TOKEN', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
  });
  afterAll(() => server.close());

  it.each(OPERATIONS)(
    'answers 404 not_found to $method /admin/v1/$path, token or not',
    async (op) => {
      const path = op.path.replace('{id}', 'key_0000000000000000');
      for (const token of [ADMIN_TOKEN, undefined]) {
        const res = await http(`${server.url}/admin/v1/${path}`, {
          method: op.method,
          ...(token ? { key: token } : {}),
          ...(op.body ? { body: op.body } : {}),
        });
        expect(res.status).toBe(404);
        expect(res.json).toEqual({
          error: {
            code: 'not_found',
            message: expect.any(String),
            requestId: res.headers.get('x-request-id'),
          },
        });
        expect(res.headers.get('www-authenticate')).toBeNull();
      }
    },
  );

  it('answers 404 not_found for the console, and the document has no admin routes', async () => {
    for (const path of ['/admin', '/admin/', '/admin/index.html', '/admin/js/main.js']) {
      const res = await http(`${server.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.json.error.code).toBe('not_found');
    }
    const doc = (await http(`${server.url}/openapi.json`)).json;
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/admin'))).toEqual([]);
    expect(doc.components.securitySchemes.adminToken).toBeUndefined();
  });
});

describe('admin API with PLAUDER_ADMIN_TOKEN', () => {
  let server: TestServer;
  let keyId: string;
  let apiKey: string;
  beforeAll(async () => {
    server = await startAdminServer();
    ({ id: keyId, key: apiKey } = await server.createKey({ name: 'victim' }));
  });
  afterAll(() => server.close());

  const refusals: ReadonlyArray<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['a wrong token', { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}X` }],
    ['the token with a character more', { authorization: `Bearer ${ADMIN_TOKEN}x` }],
    ['a prefix of the token', { authorization: `Bearer ${ADMIN_TOKEN.slice(0, 10)}` }],
    ['an empty bearer', { authorization: 'Bearer ' }],
    [
      'the Basic scheme',
      { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
    ],
    ['the token without a scheme', { authorization: ADMIN_TOKEN }],
    ['the token as a second credential', { authorization: `Bearer x ${ADMIN_TOKEN}` }],
  ];

  it.each(refusals)(
    'answers 401 admin_unauthorized with WWW-Authenticate for %s',
    async (_, headers) => {
      for (const op of OPERATIONS) {
        const res = await http(`${server.url}/admin/v1/${op.path.replace('{id}', keyId)}`, {
          method: op.method,
          headers,
          ...(op.body ? { body: op.body } : {}),
        });
        expect(res.status, `${op.method} ${op.path}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer realm="[^"]+"$/);
        expect(res.json).toEqual({
          error: {
            code: 'admin_unauthorized',
            message: expect.any(String),
            requestId: res.headers.get('x-request-id'),
          },
        });
      }
      // Nothing was changed by the refused requests.
      const key = await admin(server, `keys/${keyId}`);
      expect(key.json).toMatchObject({ status: 'active', name: 'victim' });
    },
  );

  it('refuses an API key as admin token, and the token on the query string', async () => {
    expect((await admin(server, 'keys', { token: apiKey })).status).toBe(401);
    const res = await http(`${server.url}/admin/v1/keys?token=${ADMIN_TOKEN}`);
    expect(res.status).toBe(401);
  });

  it('checks the token before the body: a bad body with a bad token is 401, not 400', async () => {
    const res = await http(`${server.url}/admin/v1/keys`, {
      raw: '{not json',
      headers: { 'content-type': 'json', authorization: 'Bearer nope' },
    });
    expect(res.status).toBe(401);
  });

  it('accepts the scheme in any case, as HTTP defines it', async () => {
    const res = await http(`${server.url}/admin/v1/plans`, {
      headers: { authorization: `bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
  });

  it('sends no CORS headers and has no preflight route', async () => {
    const origin = { origin: 'https://evil.example' };
    const res = await admin(server, 'keys', { headers: origin });
    expect(res.status).toBe(200);
    for (const name of res.headers.keys()) expect(name).not.toMatch(/^access-control-/);
    const preflight = await http(`${server.url}/admin/v1/keys`, {
      method: 'OPTIONS',
      headers: { ...origin, 'access-control-request-method': 'POST' },
    });
    // OPTIONS is no method of the route: 405 with the methods it has, and no CORS grant.
    expect(preflight.status).toBe(405);
    expect(preflight.headers.get('allow')).toMatch(/GET/);
    for (const name of preflight.headers.keys()) expect(name).not.toMatch(/^access-control-/);
  });

  it('logs one line per request and an audit line per change, never the token or a key', async () => {
    const created = await admin(server, 'keys', { body: { name: 'logged', plan: 'standard' } });
    const rotated = await admin(server, `keys/${created.json.id}/rotate`, {
      body: { grace: '1h' },
    });
    await admin(server, `keys/${created.json.id}/revoke`, { method: 'POST' });
    await admin(server, 'keys', { token: `${ADMIN_TOKEN}-wrong` });
    await admin(server, 'keys', { body: { name: ADMIN_TOKEN, plan: 'gold' } });

    const logs = server.logs.join('\n');
    for (const secret of [ADMIN_TOKEN, created.json.key, rotated.json.key, apiKey]) {
      expect(logs).not.toContain(secret);
      expect(logs).not.toContain(secret.slice(8, 30));
    }
    const audit = server.logs
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg === 'admin change');
    expect(audit.map((entry) => entry.admin)).toEqual(
      expect.arrayContaining(['create', 'rotate', 'revoke']),
    );
    expect(audit.every((entry) => entry.keyId === created.json.id)).toBe(true);
    const requestLines = server.logs
      .map((line) => JSON.parse(line))
      .filter((e) => e.msg === 'request');
    expect(requestLines.some((e) => e.route === '/admin/v1/keys' && e.status === 401)).toBe(true);
    expect(requestLines.some((e) => e.outcome === 'admin_unauthorized')).toBe(true);
  });
});
