/**
 * /docs: Swagger UI rendering the service's own OpenAPI document, with every asset served
 * by the service itself. Always on, also without an admin token.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
});
afterAll(() => server.close());

describe('GET /docs', () => {
  it('is an HTML page whose scripts, styles and icons all come from this service', async () => {
    const res = await http(`${server.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    const assets = [...res.text.matchAll(/\s(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(assets.length).toBeGreaterThanOrEqual(5);
    for (const asset of assets) {
      expect(asset).toMatch(/^\/docs\//);
      const file = await fetch(`${server.url}${asset}`);
      expect(file.status, asset).toBe(200);
      const type = file.headers.get('content-type') ?? '';
      if (asset.endsWith('.js')) expect(type).toMatch(/javascript/);
      if (asset.endsWith('.css')) expect(type).toMatch(/^text\/css/);
      if (asset.endsWith('.png')) expect(type).toBe('image/png');
      await file.arrayBuffer();
    }
  });

  it('has a CSP that allows only this origin', async () => {
    const res = await http(`${server.url}/docs/`);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/^default-src 'self'/);
    expect(csp).toMatch(/script-src 'self';/);
    expect(csp).not.toMatch(/https?:|unsafe-eval|validator/);
  });

  it('renders the same document as /openapi.json and sends it nowhere else', async () => {
    const json = await http(`${server.url}/docs/json`);
    expect(json.json).toEqual((await http(`${server.url}/openapi.json`)).json);
    const init = await http(`${server.url}/docs/static/swagger-initializer.js`);
    expect(init.status).toBe(200);
    expect(init.text).toContain('validatorUrl: null');
    const code = init.text.replace(/^\s*\/\/.*$/gm, ''); // a comment links to Stack Overflow
    expect(code).not.toMatch(/https?:\/\//);
  });
});

describe('the examples /docs sends with "Try it out"', () => {
  it('asks /api/chat and /api/chat-en for a real reply: a greeting, not streamed', async () => {
    const doc = (await http(`${server.url}/openapi.json`)).json;
    for (const [path, message] of [
      ['/api/chat', 'Hallo!'],
      ['/api/chat-en', 'Hello!'],
    ] as const) {
      const body = doc.paths[path].post.requestBody.content['application/json'];
      const examples = Object.values(body.examples ?? {}).map(
        (e) => (e as { value: unknown }).value,
      );
      const example = body.example ?? examples[0];
      expect(example, path).toEqual({ message });
      expect(example, path).not.toHaveProperty('stream');
      // Swagger UI's Try it out asks for the first media type of the answer: JSON.
      expect(Object.keys(doc.paths[path].post.responses['200'].content)[0], path).toBe(
        'application/json',
      );
      // And the example gets a real reply, as JSON.
      const key = await server.createKey();
      const res = await http(`${server.url}${path}`, { key: key.key, body: example });
      expect(res.status).toBe(200);
      expect(res.json.reply).toEqual(expect.any(String));
      expect(res.json.error).toBeUndefined();
    }
  });
});
