/**
 * With the admin API enabled, /openapi.json still documents exactly the API routes the
 * app serves, now with the admin routes and their bearer security scheme.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentedRoutes, servedRoutes } from '../helpers/route-tree.js';
import { http, type TestServer } from '../helpers/test-server.js';
import { startAdminServer } from './admin-client.js';

const ADMIN_ROUTES = [
  'GET /admin/v1/keys',
  'POST /admin/v1/keys',
  'GET /admin/v1/keys/{id}',
  'PATCH /admin/v1/keys/{id}',
  'POST /admin/v1/keys/{id}/rotate',
  'POST /admin/v1/keys/{id}/revoke',
  'GET /admin/v1/keys/{id}/usage',
  'GET /admin/v1/usage',
  'GET /admin/v1/plans',
  'GET /admin/v1/events',
];

/** Pages for people (the API docs, the console: all of /admin but the API), not API routes. */
const isPage = (route: string) => /^[A-Z]+ \/(docs(\/|$)|admin(?!\/v1\/))/.test(route);

let server: TestServer;
let doc: any;

beforeAll(async () => {
  server = await startAdminServer({ env: { PLAUDER_PLANS: 'standard=1000,plus=5000,team=9000' } });
  doc = (await http(`${server.url}/openapi.json`)).json;
});
afterAll(() => server.close());

function operations(): Array<[string, any]> {
  return documentedRoutes(doc)
    .filter((route) => route.includes(' /admin/'))
    .map((route) => {
      const [method = '', path = ''] = route.split(' ');
      return [route, doc.paths[path][method.toLowerCase()]];
    });
}

describe('/openapi.json with the admin API enabled', () => {
  it('documents exactly the API routes the app serves, the admin routes included', () => {
    const served = servedRoutes(server.app).filter((r) => !r.startsWith('HEAD ') && !isPage(r));
    expect(documentedRoutes(doc)).toEqual(served);
    expect(served.filter((r) => r.includes(' /admin/'))).toEqual([...ADMIN_ROUTES].sort());
  });

  it('has the admin bearer scheme on every admin route, with a 401 answer', () => {
    expect(doc.components.securitySchemes.adminToken).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    expect(operations()).toHaveLength(ADMIN_ROUTES.length);
    for (const [route, operation] of operations()) {
      expect(operation.security, route).toEqual([{ adminToken: [] }]);
      expect(operation.summary, route).toEqual(expect.any(String));
      expect(operation.responses['401'].content['application/json'].schema.allOf[0], route).toEqual(
        {
          $ref: '#/components/schemas/ErrorBody',
        },
      );
    }
  });

  it('documents the bodies, the key id parameter, the month query and the error codes', () => {
    const create = doc.paths['/admin/v1/keys'].post;
    const createBody = create.requestBody.content['application/json'].schema;
    expect(createBody.required).toEqual(['name', 'plan']);
    expect(createBody.additionalProperties).toBe(false);
    expect(createBody.properties.plan.enum).toEqual(['standard', 'plus', 'team']);
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401']));

    const patch = doc.paths['/admin/v1/keys/{id}'].patch;
    expect(Object.keys(patch.requestBody.content['application/json'].schema.properties)).toEqual([
      'name',
      'plan',
      'active',
    ]);
    expect(patch.parameters).toEqual([
      expect.objectContaining({ name: 'id', in: 'path', required: true }),
    ]);
    expect(Object.keys(patch.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '404', '409']),
    );
    const listParameters = ['limit', 'cursor', 'q', 'plan', 'active', 'sort'];
    const named = (operation: { parameters: Array<{ name: string; in: string }> }) =>
      operation.parameters.map((p) => `${p.in}:${p.name}`);
    expect(named(doc.paths['/admin/v1/usage'].get)).toEqual(
      ['month', ...listParameters].map((name) => `query:${name}`),
    );
    expect(named(doc.paths['/admin/v1/keys'].get)).toEqual(
      listParameters.map((name) => `query:${name}`),
    );
    const codes = doc.components.schemas.ErrorBody.properties.error.properties.code.enum;
    expect(codes).toEqual(
      expect.arrayContaining(['admin_unauthorized', 'key_not_found', 'json_invalid']),
    );
  });

  it('has the plaintext key only in the answers of create and rotate, and no hash anywhere', () => {
    const withKey = operations()
      .filter(([, operation]) =>
        Object.values<any>(operation.responses).some(
          (r) => r.content?.['application/json']?.schema?.properties?.key,
        ),
      )
      .map(([route]) => route);
    expect(withKey.sort()).toEqual(['POST /admin/v1/keys', 'POST /admin/v1/keys/{id}/rotate']);
    expect(JSON.stringify(doc.paths)).not.toMatch(/"hash"/i);
  });

  it('resolves every $ref', () => {
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1] ?? '');
    for (const ref of refs) {
      expect(doc.components.schemas[ref.slice('#/components/schemas/'.length)], ref).toBeDefined();
    }
  });
});
