/**
 * Ops endpoints (docs/contract.md, "Operating it"): liveness, readiness, Prometheus metrics and the OpenAPI
 * document, which a test keeps in step with the routes the app really serves.
 */
import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { readOpenAiCoreConfig } from '../../src/core/openai/openai-config.js';
import { SESSION_ID_PATTERN } from '../../src/sessions/session-service.js';
import { VERSION } from '../../src/version.js';
import { documentedRoutes, servedRoutes } from '../helpers/route-tree.js';
import { type HttpResult, http, startTestServer, type TestServer } from '../helpers/test-server.js';

/** Every route the service serves without an admin token: a new route must be added here and documented. */
const EXPECTED_ROUTES = [
  'GET /',
  'POST /api/chat',
  'POST /api/chat-en',
  'GET /api/sessions/{sessionId}',
  'DELETE /api/sessions/{sessionId}',
  'GET /api/usage',
  'POST /mcp',
  'GET /mcp',
  'DELETE /mcp',
  'POST /v1/chat/completions',
  'POST /v1/responses',
  'GET /v1/responses/{id}',
  'DELETE /v1/responses/{id}',
  'POST /v1/messages',
  'POST /v1/messages/count_tokens',
  'GET /v1/models',
  'GET /v1/models/{model}',
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  'GET /openapi.json',
];
/** The API docs page (Swagger UI) and its assets: pages for people, not API routes, so not in the document. */
const isDocsPage = (route: string) => /^[A-Z]+ \/docs(\/|$)/.test(route);
const KEY_PROTECTED = [
  '/api/chat',
  '/api/chat-en',
  '/api/sessions/{sessionId}',
  '/api/usage',
  '/mcp',
  '/v1/chat/completions',
  '/v1/responses',
  '/v1/responses/{id}',
  '/v1/messages',
  '/v1/messages/count_tokens',
  '/v1/models',
  '/v1/models/{model}',
];

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
});
afterAll(() => server.close());

function expectOpsHeaders(res: HttpResult): void {
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
}

function metricValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('GET /healthz', () => {
  it('answers 200 {status: ok} with no-store and a request id', async () => {
    const res = await http(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.json).toEqual({ status: 'ok' });
    expectOpsHeaders(res);
  });
});

describe('GET /readyz', () => {
  it('answers 200 {status: ready} while the database answers', async () => {
    const res = await http(`${server.url}/readyz`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ready' });
    expectOpsHeaders(res);
  });

  it('answers 503 service_unavailable once the database is closed, while /healthz stays 200', async () => {
    const broken = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
    try {
      // A first readiness check prepares (and caches) the ping statement.
      expect((await http(`${broken.url}/readyz`)).status).toBe(200);
      await broken.services.store.close();

      const res = await http(`${broken.url}/readyz`);
      expect(res.status).toBe(503);
      expect(res.json).toEqual({
        error: {
          code: 'service_unavailable',
          message: expect.any(String),
          requestId: res.headers.get('x-request-id'),
        },
        reason: 'the database does not answer',
      });
      expect(res.text).not.toMatch(/sqlite|database connection|stack/i);
      expectOpsHeaders(res);
      expect((await http(`${broken.url}/healthz`)).status).toBe(200);
      // The log says why, with the error's own type (never a bare "Object").
      const logged = broken.logs
        .map((line) => JSON.parse(line))
        .find((entry) => entry.msg === 'database not reachable');
      expect(logged?.error?.type).toEqual(expect.any(String));
      expect(logged?.error?.type).not.toBe('Object');
    } finally {
      await broken.close();
    }
  });
});

describe('GET /readyz and the schema', () => {
  /** A server whose database lost migrations after it started (a restore, a wrong URL). */
  async function withSchema(change: (db: Kysely<any>) => Promise<unknown>) {
    const target = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
    expect((await http(`${target.url}/readyz`)).status).toBe(200);
    await change(target.services.store.db as unknown as Kysely<any>);
    const res = await http(`${target.url}/readyz`);
    await target.close();
    return res;
  }

  it('answers 503 when the schema is missing', async () => {
    const res = await withSchema((db) => db.schema.dropTable('kysely_migration').execute());
    expect(res.status).toBe(503);
    expect(res.json.reason).toBe('the database schema is missing');
  });

  it('answers 503 when the core is not configured, without asking it anything', async () => {
    const target = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
    let asked = 0;
    const core = { name: 'openai', reply: async () => String(++asked) };
    const config = {
      ...target.config,
      core: { kind: 'openai' as const, options: { ...openAiOptions(), model: '' } },
    };
    const app = await buildApp(config, { services: target.services, core });
    try {
      const res = await app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json().reason).toBe('the openai core needs a base URL and a model');
      expect(asked).toBe(0);
      const configured = { ...config, core: { kind: 'openai' as const, options: openAiOptions() } };
      const ready = await buildApp(configured, { services: target.services, core });
      expect((await ready.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
      await ready.close();
      expect(asked).toBe(0);
    } finally {
      await app.close();
      await target.close();
    }
  });
});

function openAiOptions() {
  const problems: string[] = [];
  const options = readOpenAiCoreConfig(
    { PLAUDER_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', PLAUDER_OPENAI_MODEL: 'm' },
    problems,
  );
  expect(problems).toEqual([]);
  return options;
}

describe('GET /metrics', () => {
  it('is Prometheus text counting requests by route pattern, method and status', async () => {
    const series = 'plauder_http_requests_total{route="/api/chat",method="POST",status="200"}';
    const before = metricValue((await http(`${server.url}/metrics`)).text, series);
    const { key } = await server.createKey();
    for (let i = 0; i < 2; i++) {
      expect(
        (await http(`${server.url}/api/chat`, { key, body: { message: 'Hallo' } })).status,
      ).toBe(200);
    }

    const res = await http(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expectOpsHeaders(res);
    expect(res.text).toContain('# TYPE plauder_http_requests_total counter');
    expect(metricValue(res.text, series)).toBe(before + 2);
    expect(res.text).toMatch(
      /^plauder_chat_outcomes_total\{endpoint="\/api\/chat",outcome="reply"\} \d+$/m,
    );
    expect(res.text).toMatch(
      /^plauder_http_request_duration_seconds_bucket\{le="[^"]+",route="\/api\/chat"\} \d+$/m,
    );
  });

  it('labels routes by pattern and never carries a session id, a key, a key id or more of an unknown path than its API', async () => {
    const { key, id } = await server.createKey();
    const sessionId = 'metrics-secret-session-4711';
    await http(`${server.url}/api/chat-en`, { key, body: { message: 'Hi', sessionId } });
    await http(`${server.url}/api/chat-en`, { key, body: { message: '   ' } });
    await http(`${server.url}/api/sessions/${sessionId}`, { key });
    await http(`${server.url}/api/sessions/${sessionId}`, { key, method: 'DELETE' });
    await http(`${server.url}/api/chat`, {
      headers: { authorization: `Bearer ${key}x` },
      body: { message: 'Hi' },
    });
    await http(`${server.url}/no-such-path-0815/${sessionId}?q=${key}`);

    const { text } = await http(`${server.url}/metrics`);
    expect(text).toContain('route="/api/sessions/:sessionId",method="GET",status="200"');
    expect(text).toContain('route="/api/sessions/:sessionId",method="DELETE",status="204"');
    expect(text).toContain('route="/api/chat",method="POST",status="401"');
    expect(text).toMatch(/outcome="message_missing"/);
    for (const secret of [sessionId, key, key.slice(0, 20), id]) {
      expect(text).not.toContain(secret);
    }
    // An unknown path is labelled by its first segment only, never an id further down.
    expect(text).toContain('route="unmatched GET /no-such-path-0815"');
    // Every route label is a pattern the app serves (or the catch-all for unknown paths).
    const routes = new Set([...text.matchAll(/route="([^"]*)"/g)].map((m) => m[1]));
    const patterns = new Set(
      servedRoutes(server.app).map((r) => r.slice(r.indexOf(' ') + 1).replace(/\{(\w+)\}/g, ':$1')),
    );
    for (const route of routes) {
      if (!route?.startsWith('unmatched'))
        expect(patterns, `route label ${route}`).toContain(route);
    }
  });
});

describe('GET /openapi.json', () => {
  let doc: any;
  beforeAll(async () => {
    const res = await http(`${server.url}/openapi.json`);
    expect(res.status).toBe(200);
    expectOpsHeaders(res);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    doc = res.json;
  });

  it('is an OpenAPI 3.1.0 document of plauder', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'plauder', version: expect.any(String) });
  });

  it('documents exactly the routes the app serves, with their methods', () => {
    const served = servedRoutes(server.app).filter((route) => !isDocsPage(route));
    // Fastify adds HEAD for every GET by itself; the document lists the real methods.
    const heads = served.filter((r) => r.startsWith('HEAD '));
    expect(heads.map((r) => r.replace('HEAD ', 'GET '))).toEqual(
      served.filter((r) => r.startsWith('GET ')),
    );
    const withoutHead = served.filter((r) => !r.startsWith('HEAD '));
    expect(withoutHead).toEqual([...EXPECTED_ROUTES].sort());
    expect(documentedRoutes(doc)).toEqual(withoutHead);
  });

  it.each(['/api/chat', '/api/chat-en'])(
    'documents the request body and the answers of POST %s',
    (path) => {
      const operation = doc.paths[path].post;
      const schema = operation.requestBody.content['application/json'].schema;
      expect(schema.type).toBe('object');
      expect(schema.required).toEqual(['message']);
      expect(schema.properties.message.type).toBe('string');
      expect(schema.properties.sessionId.type).toBe('string');
      expect(schema.properties.sessionId.pattern).toBe(SESSION_ID_PATTERN.source);
      expect(Object.keys(operation.responses)).toEqual(
        expect.arrayContaining(['200', '401', '429', '500']),
      );
      expect(operation.responses['200'].content['application/json'].schema).toMatchObject({
        required: ['reply'],
        properties: { reply: { type: 'string' }, error: { type: 'object' } },
      });
      for (const status of ['401', '429', '500']) {
        expect(operation.responses[status].content['application/json'].schema.allOf[0]).toEqual({
          $ref: '#/components/schemas/ErrorBody',
        });
      }
    },
  );

  it.each(['/api/chat', '/api/chat-en'])('documents the event stream of POST %s', (path) => {
    const operation = doc.paths[path].post;
    const stream = operation.responses['200'].content['text/event-stream'].schema;
    expect(stream.type).toBe('string');
    for (const word of ['event: delta', 'event: done', 'event: error', ': ping']) {
      expect(stream.description).toContain(word);
    }
    expect(operation.requestBody.content['application/json'].schema.properties.stream.type).toBe(
      'boolean',
    );
  });

  it('documents the OpenAI-compatible routes: body, chat.completion, chunks and errors', () => {
    const completions = doc.paths['/v1/chat/completions'].post;
    const body = completions.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['model', 'messages']);
    expect(body.properties.model.enum).toEqual(['plauder-de', 'plauder-en']);
    const answer = completions.responses['200'].content;
    expect(JSON.stringify(answer['application/json'].schema.properties.object)).toContain(
      '"chat.completion"',
    );
    expect(answer['text/event-stream'].schema.description).toContain('data: [DONE]');
    const codes = (status: string) => {
      const schema = completions.responses[status].content['application/json'].schema;
      expect(schema.allOf[0]).toEqual({ $ref: '#/components/schemas/OpenAiError' });
      return schema.allOf[1].properties.error.properties.code.enum;
    };
    for (const status of ['400', '401', '403', '404', '409', '413', '422', '429', '500']) {
      expect(codes(status).length, status).toBeGreaterThan(0);
    }
    expect(codes('403')).toEqual(['plan_inactive']);
    expect(codes('404')).toEqual(['model_not_found']);
    expect(completions.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'x-session-id', in: 'header' })]),
    );
    const models = doc.paths['/v1/models'].get.responses['200'].content['application/json'];
    // OpenAI's list, or Anthropic's when asked with `anthropic-version` (docs/anthropic.md).
    const openAiList = models.schema.anyOf?.[0] ?? models.schema;
    expect(JSON.stringify(openAiList.properties.object)).toContain('"list"');
  });

  it('documents the session and usage routes with their answers and the session id parameter', () => {
    const session = doc.paths['/api/sessions/{sessionId}'];
    for (const method of ['get', 'delete']) {
      expect(session[method].parameters).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'sessionId', in: 'path', required: true }),
        ]),
      );
      expect(Object.keys(session[method].responses)).toEqual(
        expect.arrayContaining(['401', '404']),
      );
    }
    expect(Object.keys(session.get.responses)).toContain('200');
    expect(Object.keys(session.delete.responses)).toContain('204');
    expect(
      doc.paths['/api/usage'].get.responses['200'].content['application/json'].schema.required,
    ).toEqual(expect.arrayContaining(['plan', 'active', 'limit', 'used', 'remaining', 'resetsAt']));
  });

  it('has the bearer security scheme on every key-protected route, and only there', () => {
    expect(doc.components.securitySchemes.bearerKey).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    for (const route of documentedRoutes(doc)) {
      const [method = '', path = ''] = route.split(' ');
      const operation = doc.paths[path][method.toLowerCase()];
      if (KEY_PROTECTED.includes(path))
        expect(operation.security, route).toEqual([{ bearerKey: [] }]);
      else expect(operation.security, route).toBeUndefined();
    }
  });

  it('has an error body schema listing every error code, and every $ref resolves', () => {
    const errorBody = doc.components.schemas.ErrorBody;
    expect(errorBody.properties.error.required).toEqual(['code', 'message', 'requestId']);
    expect(errorBody.properties.error.properties.code.enum).toEqual(
      expect.arrayContaining([
        'invalid_api_key',
        'quota_exceeded',
        'internal_error',
        'payload_too_large',
      ]),
    );
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas[ref.slice('#/components/schemas/'.length)], ref).toBeDefined();
    }
  });
});

describe('the version', () => {
  it("is package.json's, in the OpenAPI document", async () => {
    const { version } = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    );
    expect(VERSION).toBe(version);
    expect((await http(`${server.url}/openapi.json`)).json.info.version).toBe(version);
  });
});
