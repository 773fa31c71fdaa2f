/**
 * `/v1` on input it must refuse by name or must not echo: `tools` with a core that cannot
 * call tools (an empty list too), and an unknown model in the path of `GET /v1/models/…`
 * (where a key pasted into the wrong field would otherwise come back in the answer).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectDeclaredAnswers } from '../helpers/declared-answers.js';
import { http, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let key: string;
let keyId: string;

beforeAll(async () => {
  server = await startTestServer();
  ({ key, id: keyId } = await server.createKey());
});
afterAll(() => server?.close());

const used = () =>
  server.services.usage.used(keyId, server.services.quota.monthOf(Date.now()).month);

describe('/v1 with the built-in core', () => {
  it.each([
    ['tools', []],
    ['tools', [{ type: 'function', function: { name: 'f', parameters: {} } }]],
    ['functions', []],
  ])('answers 400 naming %s for %j, before anything is counted', async (name, value) => {
    const before = await used();
    const res = await http(`${server.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', messages: [{ role: 'user', content: 'Hallo' }], [name]: value },
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: 'body_invalid', param: name });
    expect(await used()).toBe(before);
  });

  it('answers an unknown model in the path with 404 model_not_found and does not echo it', async () => {
    for (const path of [key, 'gpt-4o', 'x'.repeat(200)]) {
      const res = await http(`${server.url}/v1/models/${path}`, { key });
      expect(res.status).toBe(404);
      expect(res.json.error).toMatchObject({ code: 'model_not_found', param: 'model' });
      expect(res.text).not.toContain(path);
      expect(res.text).not.toContain(path.slice(0, 12));
    }
  });
});

it('answers only errors that its routes declare', () => expectDeclaredAnswers(server));
