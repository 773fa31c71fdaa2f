/**
 * The edges of `/v1` (docs/openai.md, docs/configuration.md): an unknown path answers in
 * OpenAI's shape with the endpoints plauder serves, and is logged with its method and path;
 * the length limit of a message is the built-in core's, not a gateway's.
 */
import { describe, expect } from 'vitest';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { http, type TestServer } from '../helpers/test-server.js';

const logLines = (s: TestServer) =>
  s.logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'request');

describe('an unknown path under /v1', () => {
  test('is 404 in OpenAI shape naming the endpoints that exist; log and metric name the API asked for, no query string, no id, no key', async ({
    serve,
  }) => {
    const s = await serve();
    const { key } = await s.createKey();
    const answer = await http(`${s.url}/v1/embeddings?api_key=${key}`, {
      key,
      body: { model: 'plauder-en', input: 'Hallo' },
    });
    expect(answer.status).toBe(404);
    expect(answer.json.error).toMatchObject({ code: 'not_found', type: 'invalid_request_error' });
    for (const endpoint of [
      '/v1/chat/completions',
      '/v1/responses',
      '/v1/messages',
      '/v1/models',
    ]) {
      expect(answer.json.error.message).toContain(endpoint);
    }
    expect(answer.text).not.toContain(key);

    // A long path is cut to 64 characters; what lies below the API's name (ids) is left out.
    const long = `/v1/${'x'.repeat(200)}/resp_secret-id`;
    await http(`${s.url}${long}`, { key });
    const routes = logLines(s).map((line) => line.route);
    expect(routes).toContain('unmatched POST /v1/embeddings');
    expect(routes).toContain(`unmatched GET ${long.slice(0, 64)}`);
    expect(s.logs.join('\n')).not.toContain(key);
    expect(s.logs.join('\n')).not.toContain('resp_secret-id');

    const metrics = await http(`${s.url}/metrics`);
    expect(metrics.text).toContain('route="unmatched POST /v1/embeddings"');
    expect(metrics.text).not.toContain(key);
  });
});

describe('the length of a message', () => {
  const long = 'Bitte fasse diese Seite zusammen. '.repeat(400);

  test('with the openai core a pasted page of 13 600 characters reaches the upstream', async ({
    serve,
    upstream,
  }) => {
    const s = await serve({ env: openAiEnv(upstream) });
    const { key } = await s.createKey();
    const answer = await http(`${s.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', messages: [{ role: 'user', content: long }] },
    });
    expect(answer.status).toBe(200);
    const [received] = (await upstream.received()).requests;
    expect(JSON.stringify(received?.body)).toContain(long.trim());
  });

  test('with the openai core and PLAUDER_MESSAGE_MAX_CHARS set (the operator bounds it) it is 400 naming the message', async ({
    serve,
    upstream,
  }) => {
    const s = await serve({ env: openAiEnv(upstream, { PLAUDER_MESSAGE_MAX_CHARS: '1000' }) });
    const { key } = await s.createKey();
    const answer = await http(`${s.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', messages: [{ role: 'user', content: long }] },
    });
    expect(answer.status).toBe(400);
    expect(answer.json.error.message).toContain('1000');
    expect((await upstream.received()).requests).toHaveLength(0);
  });

  test('with the built-in core it is 4 000 characters by default', async ({ serve }) => {
    const s = await serve();
    const { key } = await s.createKey();
    const refused = await http(`${s.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', messages: [{ role: 'user', content: 'a'.repeat(4001) }] },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toContain('4000');
    const chat = await http(`${s.url}/api/chat`, { key, body: { message: 'a'.repeat(4001) } });
    expect(chat.json.error.code).toBe('message_too_long');
  });
});
