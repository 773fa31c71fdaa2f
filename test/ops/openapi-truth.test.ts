/**
 * `/openapi.json` is complete and true: a maintained validator accepts it, every response
 * has a description, its headers and an example that matches its schema (error examples
 * carry a code of their own status: by `statusOf` in plauder's envelope, by `openAiStatus`
 * in OpenAI's error shape under /v1), and every documented status of every route really
 * occurs: each one is driven here against a real server, and its answer must match the
 * documented schema, codes and headers; a documented event stream is driven too, and its
 * events must follow the documented example. Every error the servers answered here is one
 * its route declares. A wrong method on a known path is 405 with `Allow`; `GET /` points to
 * /docs and /admin/.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createParser } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CoreAdapter, CoreError } from '../../src/core/core-adapter.js';
import { ERROR_CODES, type ErrorCode, statusOf } from '../../src/errors/error-codes.js';
import {
  MODEL_NOT_FOUND,
  type OpenAiErrorCode,
  openAiStatus,
} from '../../src/routes/v1/completion-answer.js';
import { anthropicStatus } from '../../src/routes/v1/messages/messages-answer.js';
import {
  ITEM_NOT_FOUND,
  PREVIOUS_NOT_FOUND,
} from '../../src/routes/v1/responses/responses-request.js';
import { undeclaredAnswers } from '../helpers/declared-answers.js';
import { createGatedCore, type GatedCore } from '../helpers/gated-core.js';
import { type HttpResult, http, startTestServer, type TestServer } from '../helpers/test-server.js';

const ADMIN_TOKEN = 'openapi-truth-admin-token-0123456789';
const env = {
  PLAUDER_PLANS: 'standard=1000,plus=5000,tiny=1',
  PLAUDER_ADMIN_TOKEN: ADMIN_TOKEN,
};

type Json = Record<string, any>;

/** Replies at once, except to "slow", which is held until the test releases it (409 in flight). */
function testCore(): CoreAdapter & { readonly held: GatedCore } {
  const held = createGatedCore();
  return {
    name: 'test',
    held,
    reply: (request) =>
      request.message === 'slow'
        ? held.reply(request)
        : Promise.resolve(request.language === 'de' ? 'Hallo!' : 'Hello!'),
  };
}

/** A core whose upstreams all rest (their circuit breakers open): it refuses every turn at once. */
function restingCore(): CoreAdapter {
  return {
    name: 'resting',
    reply: () =>
      Promise.reject(
        new CoreError('core_unavailable', 'every upstream rests', { retryAfterMs: 20_000 }),
      ),
  };
}

let server: TestServer;
let broken: TestServer;
let resting: TestServer;
let core: ReturnType<typeof testCore>;
let document: Json;

beforeAll(async () => {
  core = testCore();
  server = await startTestServer({ env, core });
  broken = await startTestServer({ env, core: testCore() });
  resting = await startTestServer({ env, core: restingCore() });
  document = (await http(`${server.url}/openapi.json`)).json as Json;
});
afterAll(async () => {
  for (const call of core.held.calls) call.release();
  await server.close();
  await broken.close().catch(() => {});
  await resting.close();
});

function operations(): Array<{ method: string; path: string; status: number; response: Json }> {
  const list = [];
  for (const [path, methods] of Object.entries(document.paths as Json)) {
    for (const [method, operation] of Object.entries(methods as Json)) {
      for (const [status, response] of Object.entries((operation as Json).responses as Json)) {
        list.push({ method, path, status: Number(status), response: response as Json });
      }
    }
  }
  return list;
}

function ajv() {
  const validator = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(validator);
  return validator;
}

/** A response schema compiled with the document's components, so its $refs resolve. */
function compile(schema: Json) {
  return ajv().compile({ ...schema, components: document.components });
}

/** Whether a response schema is (or extends) the component `name`. */
function refersTo(schema: Json | undefined, name: string): boolean {
  const ref = `#/components/schemas/${name}`;
  return schema?.$ref === ref || (schema?.allOf ?? []).some((part: Json) => part.$ref === ref);
}

/** The status an error code answers with, in the error shape the schema documents. */
function statusOfCode(schema: Json, code: string): number | undefined {
  if (refersTo(schema, 'AnthropicError')) {
    return [...ERROR_CODES, MODEL_NOT_FOUND].includes(code as OpenAiErrorCode)
      ? anthropicStatus(code as OpenAiErrorCode).status
      : undefined;
  }
  if (refersTo(schema, 'OpenAiError')) {
    if (code === PREVIOUS_NOT_FOUND || code === ITEM_NOT_FOUND) return 404;
    return [...ERROR_CODES, MODEL_NOT_FOUND].includes(code as OpenAiErrorCode)
      ? openAiStatus(code as OpenAiErrorCode).status
      : undefined;
  }
  return ERROR_CODES.includes(code as ErrorCode) ? statusOf(code as ErrorCode) : undefined;
}

/** Server-Sent Events read with a real parser: the event's name and its data. */
function sseEvents(text: string): Array<{ event: string | undefined; data: string }> {
  const events: Array<{ event: string | undefined; data: string }> = [];
  const parser = createParser({ onEvent: ({ event, data }) => events.push({ event, data }) });
  parser.feed(text);
  return events;
}

/** The shape of a JSON value: its keys and the types of its values, not the values. */
function shapeOf(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Json)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, inner]) => [key, shapeOf(inner)]),
    );
  }
  return typeof value;
}

/**
 * The course of a stream: each event's name and the shape of its data (the data itself when
 * it is not JSON, like `[DONE]`), repeated events counted once.
 */
function courseOf(text: string): string[] {
  const course: string[] = [];
  for (const { event, data } of sseEvents(text)) {
    let shape: string;
    try {
      shape = JSON.stringify(shapeOf(JSON.parse(data)));
    } catch {
      shape = data;
    }
    const step = `${event ?? '(unnamed)'} ${shape}`;
    if (course.at(-1) !== step) course.push(step);
  }
  return course;
}

/** The documented example of an event stream. */
function streamExample(media: Json): unknown {
  return media.example ?? media.schema?.example;
}

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1 for a maintained validator', async () => {
    const result = await new Validator().validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
  });

  it('describes every response, with X-Request-Id, and no "Default Response"', () => {
    for (const { method, path, status, response } of operations()) {
      const where = `${method} ${path} ${status}`;
      expect(response.description, where).toBeTruthy();
      expect(response.description, where).not.toBe('Default Response');
      expect(Object.keys(response.headers ?? {}), where).toContain('X-Request-Id');
    }
  });

  it('gives every JSON response an example that matches its schema; error examples carry codes of their status', () => {
    for (const { method, path, status, response } of operations()) {
      const where = `${method} ${path} ${status}`;
      const json = response.content?.['application/json'];
      if (!json) continue;
      const examples =
        json.examples === undefined
          ? json.example === undefined
            ? (json.schema?.example ?? json.schema?.examples?.[0])
            : json.example
          : undefined;
      const values: unknown[] =
        json.examples !== undefined
          ? Object.values(json.examples as Json).map((e) => (e as Json).value)
          : examples === undefined
            ? []
            : [examples];
      if (
        json.schema?.$ref === undefined &&
        json.schema?.allOf === undefined &&
        values.length === 0
      )
        continue; // a free-form object (the OpenAPI document itself)
      expect(values.length, `${where}: no example`).toBeGreaterThan(0);
      const validate = compile(json.schema);
      for (const value of values) {
        expect(validate(value), `${where}: ${JSON.stringify(validate.errors)}`).toBe(true);
        // plauder's code: `error.code`, or in Anthropic's shape `error.details.error_code`.
        const error = (value as Json).error;
        const code = (error?.code ?? error?.details?.error_code) as string | number | undefined;
        if (typeof code === 'string') {
          // core_unavailable is also answered 503 while every upstream rests (docs/core.md).
          const statuses = [
            statusOfCode(json.schema, code),
            ...(code === 'core_unavailable' ? [503] : []),
          ];
          expect(statuses, `${where}: ${code}`).toContain(status);
        }
      }
    }
  });

  it('gives every event stream an example of its events', () => {
    let streams = 0;
    for (const { method, path, status, response } of operations()) {
      const media = response.content?.['text/event-stream'];
      if (!media) continue;
      streams++;
      const where = `${method} ${path} ${status}`;
      const example = streamExample(media);
      expect(typeof example, `${where}: no example`).toBe('string');
      expect(courseOf(example as string).length, `${where}: no events`).toBeGreaterThan(0);
    }
    expect(streams).toBeGreaterThanOrEqual(3);
  });

  it('documents the rate-limit, Retry-After, WWW-Authenticate and Idempotent-Replayed headers', () => {
    const chat = document.paths['/api/chat'].post.responses;
    for (const name of [
      'RateLimit',
      'RateLimit-Policy',
      'X-RateLimit-Limit',
      'X-RateLimit-Remaining',
      'X-RateLimit-Reset',
      'Idempotent-Replayed',
    ])
      expect(Object.keys(chat['200'].headers)).toContain(name);
    expect(Object.keys(chat['429'].headers)).toEqual(
      expect.arrayContaining(['Retry-After', 'RateLimit', 'X-RateLimit-Reset']),
    );
    expect(Object.keys(chat['409'].headers)).toContain('Retry-After');
    expect(Object.keys(chat['401'].headers)).toContain('WWW-Authenticate');
    const softCodes =
      chat['200'].content['application/json'].schema.properties.error.properties.code;
    expect(softCodes.enum).toEqual([
      'plan_inactive',
      'body_invalid',
      'message_missing',
      'message_invalid',
      'message_too_long',
      'session_id_invalid',
    ]);
    const session = document.paths['/api/sessions/{sessionId}'].get.parameters[0];
    expect(session.schema.pattern).toBe('^[A-Za-z0-9._:@-]{1,128}$');
    const keyId = document.paths['/admin/v1/keys/{id}'].get.parameters[0];
    expect(keyId.schema.pattern).toMatch(/^\^key_/);
  });
});

type Driver = () => Promise<HttpResult>;

const admin = (path: string, init: Parameters<typeof http>[1] = {}) =>
  http(`${server.url}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...init.headers },
  });
const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };
/** An admin body past the body limit (PLAUDER_BODY_LIMIT, 64 KiB). */
const tooLarge = (path: string, method = 'POST') =>
  admin(path, {
    method,
    raw: JSON.stringify({ name: 'a'.repeat(70_000) }),
    headers: { 'content-type': 'application/json' },
  });

async function drivers(): Promise<Record<string, Driver>> {
  const { key } = await server.createKey();
  const { key: tinyKey } = await server.createKey({ plan: 'tiny' });
  const { key: inactiveKey } = await server.createKey({ active: false });
  const { id: revokedId } = await server.createKey();
  await server.services.keys.revoke(revokedId);
  const { key: brokenKey } = await broken.createKey();
  const { key: restingKey } = await resting.createKey();
  const unknownId = 'key_00000000000000000000000000000000';
  /** The answer to a second request while the first, held by the core, is still running. */
  const whileInFlight = async (send: () => Promise<HttpResult>) => {
    const before = core.held.calls.length;
    const first = send();
    await core.held.waitForCalls(before + 1);
    const second = await send();
    core.held.calls[before]?.release();
    await first;
    return second;
  };
  const chat = (path: string) => ({
    200: () => http(`${server.url}${path}`, { key, body: { message: 'Hallo' } }),
    '200 text/event-stream': () =>
      http(`${server.url}${path}`, {
        key,
        headers: { accept: 'text/event-stream' },
        body: { message: 'Hallo' },
      }),
    400: () =>
      http(`${server.url}${path}`, {
        key,
        body: { message: 'Hallo' },
        headers: { 'idempotency-key': 'x'.repeat(300) },
      }),
    401: () => http(`${server.url}${path}`, { body: { message: 'Hallo' } }),
    409: () =>
      whileInFlight(() =>
        http(`${server.url}${path}`, {
          key,
          headers: { 'idempotency-key': `slow-${path}` },
          body: { message: 'slow' },
        }),
      ),
    413: () =>
      http(`${server.url}${path}`, {
        key,
        raw: `{"message":"${'a'.repeat(70_000)}"}`,
        headers: { 'content-type': 'application/json' },
      }),
    422: async () => {
      const headers = { 'idempotency-key': `reuse-${path}` };
      await http(`${server.url}${path}`, { key, headers, body: { message: 'eins' } });
      return http(`${server.url}${path}`, { key, headers, body: { message: 'zwei' } });
    },
    429: async () => {
      await http(`${server.url}${path}`, { key: tinyKey, body: { message: 'eins' } });
      return http(`${server.url}${path}`, { key: tinyKey, body: { message: 'zwei' } });
    },
    500: () => http(`${broken.url}${path}`, { key: brokenKey, body: { message: 'Hallo' } }),
    503: () => http(`${resting.url}${path}`, { key: restingKey, body: { message: 'Hallo' } }),
  });
  const completions = `${server.url}/v1/chat/completions`;
  const completion = (content = 'Hallo', extra: Json = {}) => ({
    model: 'plauder-de',
    messages: [{ role: 'user', content }],
    ...extra,
  });
  const responses = `${server.url}/v1/responses`;
  const responseBody = (input = 'Hallo', extra: Json = {}) => ({
    model: 'plauder-de',
    input,
    ...extra,
  });
  const messages = `${server.url}/v1/messages`;
  const anthropicKey = (apiKey: string) => ({
    'x-api-key': apiKey,
    'anthropic-version': '2023-06-01',
  });
  const message = (content = 'Hallo', extra: Json = {}) => ({
    model: 'plauder-de',
    max_tokens: 100,
    messages: [{ role: 'user', content }],
    ...extra,
  });
  const table: Record<string, Record<string, Driver>> = {
    'post /api/chat': chat('/api/chat'),
    'post /api/chat-en': chat('/api/chat-en'),
    'get /v1/models': {
      200: () => http(`${server.url}/v1/models`, { key }),
      401: () => http(`${server.url}/v1/models`, { key: 'plauder_wrong' }),
    },
    'get /v1/models/{model}': {
      200: () => http(`${server.url}/v1/models/plauder-en`, { key }),
      401: () => http(`${server.url}/v1/models/plauder-en`),
      404: () => http(`${server.url}/v1/models/gpt-4o`, { key }),
    },
    'post /v1/chat/completions': {
      200: () => http(completions, { key, body: completion() }),
      '200 text/event-stream': () =>
        http(completions, {
          key,
          body: completion('Hallo', { stream: true, stream_options: { include_usage: true } }),
        }),
      400: () => http(completions, { key, body: completion('Hallo', { n: 2 }) }),
      401: () => http(completions, { body: completion() }),
      403: () => http(completions, { key: inactiveKey, body: completion() }),
      404: () => http(completions, { key, body: completion('Hallo', { model: 'gpt-4o' }) }),
      409: () =>
        whileInFlight(() =>
          http(completions, {
            key,
            headers: { 'idempotency-key': 'slow-v1' },
            body: completion('slow'),
          }),
        ),
      413: () =>
        http(completions, {
          key,
          // Past PLAUDER_COMPLETION_BODY_LIMIT (4 MiB), the limit of this route.
          raw: JSON.stringify(completion('a'.repeat(4_200_000))),
          headers: { 'content-type': 'application/json' },
        }),
      422: async () => {
        const headers = { 'idempotency-key': 'reuse-v1' };
        await http(completions, { key, headers, body: completion('eins') });
        return http(completions, { key, headers, body: completion('zwei') });
      },
      429: async () => {
        await http(completions, { key: tinyKey, body: completion('eins') });
        return http(completions, { key: tinyKey, body: completion('zwei') });
      },
      500: () => http(`${broken.url}/v1/chat/completions`, { key: brokenKey, body: completion() }),
      503: () =>
        http(`${resting.url}/v1/chat/completions`, { key: restingKey, body: completion() }),
    },
    'post /v1/responses': {
      200: () => http(responses, { key, body: responseBody() }),
      '200 text/event-stream': () =>
        http(responses, { key, body: responseBody('Hallo', { stream: true }) }),
      400: () => http(responses, { key, body: responseBody('Hallo', { background: true }) }),
      401: () => http(responses, { body: responseBody() }),
      403: () => http(responses, { key: inactiveKey, body: responseBody() }),
      404: () =>
        http(responses, {
          key,
          body: responseBody('Hallo', { previous_response_id: 'resp_unknown' }),
        }),
      409: () =>
        whileInFlight(() =>
          http(responses, {
            key,
            headers: { 'idempotency-key': 'slow-responses' },
            body: responseBody('slow'),
          }),
        ),
      413: () =>
        http(responses, {
          key,
          raw: JSON.stringify(responseBody('a'.repeat(4_200_000))),
          headers: { 'content-type': 'application/json' },
        }),
      422: async () => {
        const headers = { 'idempotency-key': 'reuse-responses' };
        await http(responses, { key, headers, body: responseBody('eins') });
        return http(responses, { key, headers, body: responseBody('zwei') });
      },
      429: async () => {
        await http(responses, { key: tinyKey, body: responseBody('eins') });
        return http(responses, { key: tinyKey, body: responseBody('zwei') });
      },
      500: () => http(`${broken.url}/v1/responses`, { key: brokenKey, body: responseBody() }),
      503: () => http(`${resting.url}/v1/responses`, { key: restingKey, body: responseBody() }),
    },
    'get /v1/responses/{id}': {
      200: async () => {
        const { json } = await http(responses, { key, body: responseBody() });
        return http(`${responses}/${(json as Json).id}`, { key });
      },
      401: () => http(`${responses}/resp_unknown`),
      404: () => http(`${responses}/resp_unknown`, { key }),
    },
    'delete /v1/responses/{id}': {
      200: async () => {
        const { json } = await http(responses, { key, body: responseBody() });
        return http(`${responses}/${(json as Json).id}`, { key, method: 'DELETE' });
      },
      401: () => http(`${responses}/resp_unknown`, { method: 'DELETE' }),
      404: () => http(`${responses}/resp_unknown`, { key, method: 'DELETE' }),
    },
    'post /v1/messages': {
      200: () => http(messages, { headers: anthropicKey(key), body: message() }),
      '200 text/event-stream': () =>
        http(messages, { headers: anthropicKey(key), body: message('Hallo', { stream: true }) }),
      400: () =>
        http(messages, { headers: anthropicKey(key), body: message('Hallo', { top_k: 5 }) }),
      401: () => http(messages, { body: message() }),
      403: () => http(messages, { headers: anthropicKey(inactiveKey), body: message() }),
      404: () =>
        http(messages, { headers: anthropicKey(key), body: message('Hallo', { model: 'claude' }) }),
      409: () =>
        whileInFlight(() =>
          http(messages, {
            headers: { ...anthropicKey(key), 'idempotency-key': 'slow-messages' },
            body: message('slow'),
          }),
        ),
      413: () =>
        http(messages, {
          // Past PLAUDER_COMPLETION_BODY_LIMIT (4 MiB), the limit of this route too.
          headers: { ...anthropicKey(key), 'content-type': 'application/json' },
          raw: JSON.stringify(message('a'.repeat(4_200_000))),
        }),
      422: async () => {
        const headers = { ...anthropicKey(key), 'idempotency-key': 'reuse-messages' };
        await http(messages, { headers, body: message('eins') });
        return http(messages, { headers, body: message('zwei') });
      },
      429: async () => {
        await http(messages, { headers: anthropicKey(tinyKey), body: message('eins') });
        return http(messages, { headers: anthropicKey(tinyKey), body: message('zwei') });
      },
      500: () =>
        http(`${broken.url}/v1/messages`, { headers: anthropicKey(brokenKey), body: message() }),
      503: () =>
        http(`${resting.url}/v1/messages`, { headers: anthropicKey(restingKey), body: message() }),
    },
    'post /v1/messages/count_tokens': {
      200: () => http(`${messages}/count_tokens`, { headers: anthropicKey(key), body: message() }),
      400: () =>
        http(`${messages}/count_tokens`, {
          headers: anthropicKey(key),
          body: message('Hallo', { messages: [] }),
        }),
      401: () => http(`${messages}/count_tokens`, { body: message() }),
      404: () =>
        http(`${messages}/count_tokens`, {
          headers: anthropicKey(key),
          body: message('Hallo', { model: 'claude' }),
        }),
      413: () =>
        http(`${messages}/count_tokens`, {
          headers: { ...anthropicKey(key), 'content-type': 'application/json' },
          raw: JSON.stringify(message('a'.repeat(4_200_000))),
        }),
      500: () =>
        http(`${broken.url}/v1/messages/count_tokens`, {
          headers: anthropicKey(brokenKey),
          body: message(),
        }),
    },
    'post /mcp': {
      200: () =>
        http(`${server.url}/mcp`, {
          key,
          headers: MCP_ACCEPT,
          body: {
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: {
              protocolVersion: '2025-06-18',
              capabilities: {},
              clientInfo: { name: 'test', version: '1' },
            },
          },
        }),
      202: () =>
        http(`${server.url}/mcp`, {
          key,
          headers: MCP_ACCEPT,
          body: { jsonrpc: '2.0', method: 'notifications/initialized' },
        }),
      400: () => http(`${server.url}/mcp`, { key, headers: MCP_ACCEPT, body: { not: 'json-rpc' } }),
      401: () => http(`${server.url}/mcp`, { headers: MCP_ACCEPT, body: { jsonrpc: '2.0' } }),
      406: () =>
        http(`${server.url}/mcp`, {
          key,
          headers: { accept: 'text/plain' },
          body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        }),
      413: () =>
        http(`${server.url}/mcp`, {
          key,
          headers: { ...MCP_ACCEPT, 'content-type': 'application/json' },
          raw: `{"x":"${'a'.repeat(2_000_000)}"}`,
        }),
      415: () =>
        http(`${server.url}/mcp`, {
          key,
          headers: { ...MCP_ACCEPT, 'content-type': 'text/plain' },
          raw: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
        }),
      500: () =>
        http(`${broken.url}/mcp`, {
          key: brokenKey,
          headers: MCP_ACCEPT,
          body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        }),
    },
    'get /mcp': {
      401: () => http(`${server.url}/mcp`),
      405: () => http(`${server.url}/mcp`, { key }),
    },
    'delete /mcp': {
      401: () => http(`${server.url}/mcp`, { method: 'DELETE' }),
      405: () => http(`${server.url}/mcp`, { method: 'DELETE', key }),
    },
    'get /api/sessions/{sessionId}': {
      200: async () => {
        await http(`${server.url}/api/chat`, {
          key,
          body: { message: 'Hallo', sessionId: 's-get' },
        });
        return http(`${server.url}/api/sessions/s-get`, { key });
      },
      401: () => http(`${server.url}/api/sessions/s-get`),
      404: () => http(`${server.url}/api/sessions/none`, { key }),
    },
    'delete /api/sessions/{sessionId}': {
      204: async () => {
        await http(`${server.url}/api/chat`, {
          key,
          body: { message: 'Hallo', sessionId: 's-del' },
        });
        return http(`${server.url}/api/sessions/s-del`, { method: 'DELETE', key });
      },
      401: () => http(`${server.url}/api/sessions/s-del`, { method: 'DELETE' }),
      404: () => http(`${server.url}/api/sessions/none`, { method: 'DELETE', key }),
    },
    'get /api/usage': {
      200: () => http(`${server.url}/api/usage`, { key }),
      401: () => http(`${server.url}/api/usage`),
    },
    'get /healthz': { 200: () => http(`${server.url}/healthz`) },
    'get /readyz': {
      200: () => http(`${server.url}/readyz`),
      503: () => http(`${broken.url}/readyz`),
    },
    'get /metrics': { 200: () => http(`${server.url}/metrics`) },
    'get /openapi.json': { 200: () => http(`${server.url}/openapi.json`) },
    'get /': { 200: () => http(`${server.url}/`) },
    'get /admin/v1/keys': {
      200: () => admin('/admin/v1/keys'),
      400: () => admin('/admin/v1/keys?limit=0'),
      401: () => http(`${server.url}/admin/v1/keys`),
    },
    'post /admin/v1/keys': {
      201: () => admin('/admin/v1/keys', { body: { name: 'Doc', plan: 'standard' } }),
      400: () => admin('/admin/v1/keys', { body: { name: 'Doc', plan: 'gold' } }),
      401: () => http(`${server.url}/admin/v1/keys`, { body: { name: 'Doc', plan: 'standard' } }),
      413: () => tooLarge('/admin/v1/keys'),
    },
    'get /admin/v1/keys/{id}': {
      200: () => admin(`/admin/v1/keys/${revokedId}`),
      401: () => http(`${server.url}/admin/v1/keys/${revokedId}`),
      404: () => admin(`/admin/v1/keys/${unknownId}`),
    },
    'patch /admin/v1/keys/{id}': {
      200: async () =>
        admin(`/admin/v1/keys/${(await server.createKey()).id}`, {
          method: 'PATCH',
          body: { name: 'Renamed' },
        }),
      400: () => admin(`/admin/v1/keys/${revokedId}`, { method: 'PATCH', body: { plan: 'gold' } }),
      401: () => http(`${server.url}/admin/v1/keys/${revokedId}`, { method: 'PATCH', body: {} }),
      404: () => admin(`/admin/v1/keys/${unknownId}`, { method: 'PATCH', body: { name: 'x' } }),
      409: () => admin(`/admin/v1/keys/${revokedId}`, { method: 'PATCH', body: { name: 'x' } }),
      413: () => tooLarge(`/admin/v1/keys/${revokedId}`, 'PATCH'),
    },
    'post /admin/v1/keys/{id}/rotate': {
      200: async () =>
        admin(`/admin/v1/keys/${(await server.createKey()).id}/rotate`, { body: { grace: '1h' } }),
      400: async () =>
        admin(`/admin/v1/keys/${(await server.createKey()).id}/rotate`, {
          body: { grace: '400d' },
        }),
      401: () => http(`${server.url}/admin/v1/keys/${revokedId}/rotate`, { method: 'POST' }),
      404: () => admin(`/admin/v1/keys/${unknownId}/rotate`, { method: 'POST' }),
      409: () => admin(`/admin/v1/keys/${revokedId}/rotate`, { method: 'POST' }),
      413: () => tooLarge(`/admin/v1/keys/${revokedId}/rotate`),
    },
    'post /admin/v1/keys/{id}/revoke': {
      200: async () =>
        admin(`/admin/v1/keys/${(await server.createKey()).id}/revoke`, { method: 'POST' }),
      401: () => http(`${server.url}/admin/v1/keys/${revokedId}/revoke`, { method: 'POST' }),
      404: () => admin(`/admin/v1/keys/${unknownId}/revoke`, { method: 'POST' }),
      409: () => admin(`/admin/v1/keys/${revokedId}/revoke`, { method: 'POST' }),
    },
    'get /admin/v1/usage': {
      200: () => admin('/admin/v1/usage?month=2026-01'),
      400: () => admin('/admin/v1/usage?month=2026-13'),
      401: () => http(`${server.url}/admin/v1/usage`),
    },
    'get /admin/v1/keys/{id}/usage': {
      200: () => admin(`/admin/v1/keys/${revokedId}/usage`),
      401: () => http(`${server.url}/admin/v1/keys/${revokedId}/usage`),
      404: () => admin(`/admin/v1/keys/${unknownId}/usage`),
    },
    'get /admin/v1/plans': {
      200: () => admin('/admin/v1/plans'),
      401: () => http(`${server.url}/admin/v1/plans`),
    },
    'get /admin/v1/events': {
      200: () => admin('/admin/v1/events'),
      400: () => admin('/admin/v1/events?status=bogus'),
      401: () => http(`${server.url}/admin/v1/events`),
    },
  };
  return Object.fromEntries(
    Object.entries(table).flatMap(([operation, statuses]) =>
      Object.entries(statuses).map(([status, driver]) => [`${operation} ${status}`, driver]),
    ),
  );
}

describe('every documented status really occurs', () => {
  it('drives each one and gets the documented status, body, codes and headers', async () => {
    const table = await drivers();
    // The broken server's database is gone: authenticated routes fail with 500, /readyz 503.
    await broken.services.store.close();
    // A status answered as an event stream too is driven once more, asking for the stream.
    const documented = operations().flatMap(({ method, path, status, response }) => [
      `${method} ${path} ${status}`,
      ...(response.content?.['text/event-stream']
        ? [`${method} ${path} ${status} text/event-stream`]
        : []),
    ]);
    expect(
      documented.filter((name) => table[name] === undefined),
      'statuses without a driver',
    ).toEqual([]);
    for (const { method, path, status, response } of operations()) {
      const where = `${method} ${path} ${status}`;
      const res = await (table[where] as Driver)();
      expect(res.status, `${where}: ${res.text.slice(0, 300)}`).toBe(status);
      for (const name of Object.keys(response.headers ?? {})) {
        if (name === 'Idempotent-Replayed') continue; // only on a replay
        expect(res.headers.get(name), `${where}: header ${name}`).not.toBeNull();
      }
      const json = response.content?.['application/json'];
      if (json?.schema && res.json !== undefined) {
        const validate = compile(json.schema);
        expect(
          validate(res.json),
          `${where}: ${JSON.stringify(validate.errors)} ${res.text.slice(0, 300)}`,
        ).toBe(true);
      }
      const stream = response.content?.['text/event-stream'];
      if (stream) await expectStream(`${where} text/event-stream`, table, response, stream);
    }
  }, 120_000);
});

/** The streamed answer: 200, an event stream, the documented headers, the example's course. */
async function expectStream(
  where: string,
  table: Record<string, Driver>,
  response: Json,
  media: Json,
): Promise<void> {
  const res = await (table[where] as Driver)();
  expect(res.status, `${where}: ${res.text.slice(0, 300)}`).toBe(200);
  expect(res.headers.get('content-type'), where).toMatch(/^text\/event-stream/);
  for (const name of Object.keys(response.headers ?? {})) {
    if (name === 'Idempotent-Replayed') continue; // only on a replay
    expect(res.headers.get(name), `${where}: header ${name}`).not.toBeNull();
  }
  expect(courseOf(res.text), `${where}: ${res.text.slice(0, 600)}`).toEqual(
    courseOf(streamExample(media) as string),
  );
}

describe('pointers and methods', () => {
  it('answers a wrong method on a known path with 405, Allow and method_not_allowed', async () => {
    for (const [method, path, allow] of [
      ['GET', '/api/chat', 'POST'],
      ['PUT', '/api/usage', 'GET, HEAD'],
      ['POST', '/api/sessions/abc', 'DELETE, GET, HEAD'],
    ] as const) {
      const res = await http(`${server.url}${path}`, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.get('allow')).toBe(allow);
      expect(res.headers.get('x-request-id')).toBeTruthy();
      expect((res.json as Json).error.code).toBe('method_not_allowed');
    }
    const unknown = await http(`${server.url}/api/nothing`);
    expect(unknown.status).toBe(404);
    expect((unknown.json as Json).error.code).toBe('not_found');
  });

  it('GET / points to /docs, /openapi.json and the console', async () => {
    const res = await http(`${server.url}/`);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ docs: '/docs', openapi: '/openapi.json', console: '/admin/' });
    expect((await http(`${server.url}${(res.json as Json).docs}`)).status).toBe(200);
  });

  it('takes the version from package.json', async () => {
    const { readFileSync } = await import('node:fs');
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(document.info.version).toBe(pkg.version);
    expect(((await http(`${server.url}/`)).json as Json).version).toBe(pkg.version);
  });
});

describe('declared answers', () => {
  it('finds an error code or a status that a route does not declare', () => {
    const line = (method: string, route: string, status: number, outcome: string) =>
      JSON.stringify({ msg: 'request', method, route, status, outcome });
    expect(
      undeclaredAnswers(document, [
        line('GET', '/api/sessions/:sessionId', 404, 'session_not_found'),
        line('GET', '/api/sessions/:sessionId', 404, 'key_not_found'),
        line('GET', '/api/usage', 429, 'quota_exceeded'),
        line('POST', '/api/chat', 500, 'failed'),
      ]),
    ).toEqual([
      'GET /api/sessions/{sessionId} 404: key_not_found not declared',
      'GET /api/usage 429 (quota_exceeded): status not declared',
    ]);
  });

  it('finds none in the answers the servers gave here', () => {
    const logs = [...server.logs, ...broken.logs];
    expect(logs.filter((line) => line.includes('"msg":"request"')).length).toBeGreaterThan(100);
    expect(undeclaredAnswers(document, logs)).toEqual([]);
  });
});
