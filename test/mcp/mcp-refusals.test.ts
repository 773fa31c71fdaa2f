/**
 * What /mcp refuses and how (docs/contract.md, "MCP", with the decision table of "Chat endpoints"): a bad key is an
 * HTTP 401 before MCP begins; inactive plans, a used-up month, bad arguments and technical
 * failures are tool results with `isError: true`, in the decision table's order, never
 * counted. Also Idempotency-Key retries, a client that leaves, and the log line and
 * metrics of an MCP request. The official SDK client drives it; a scripted core stands in
 * for the conversational one.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type CoreAdapter, CoreError } from '../../src/core/core-adapter.js';
import type { CancelSignal } from '../../src/util/cancellation.js';
import { expectDeclaredAnswers } from '../helpers/declared-answers.js';
import { http, startTestServer, type TestServer } from '../helpers/test-server.js';
import { callTool, connectMcp, textOf } from './mcp-client.js';

const SECRET_DETAIL = 'SELECT password FROM internals /srv/plauder/core.ts:42';

/** Echoes what it was given; `fail` fails with internals in its error; `wait` waits to be cancelled. */
function scriptedCore() {
  const waiting: CancelSignal[] = [];
  const core: CoreAdapter = {
    name: 'scripted',
    async reply({ message, language, history, signal }) {
      if (message === 'fail') throw new CoreError('core_unavailable', SECRET_DETAIL);
      if (message === 'wait') {
        waiting.push(signal);
        return new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      }
      return `${language}: ${message} (${history.length} earlier)`;
    },
  };
  return { core, waiting };
}

const scripted = scriptedCore();
let server: TestServer;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startTestServer({
    core: scripted.core,
    env: { PLAUDER_PLANS: 'standard=1000,plus=5000,tiny=2,burst=1000/month+1/minute' },
  });
});
afterAll(async () => {
  for (const client of clients) await client.close();
  await server?.close();
});

async function newKey(options: { plan?: string; active?: boolean } = {}) {
  const { key, id } = await server.createKey(options);
  const client = await connectMcp(server, key);
  clients.push(client);
  const used = async () =>
    (
      await server.services.quota.current(
        { id, limit: 1000, minuteLimit: undefined },
        server.services.clock(),
      )
    ).used;
  return { key, id, client, used };
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '1' },
  },
};
const mcpHeaders = { accept: 'application/json, text/event-stream' };

describe('a bad key', () => {
  it.each([
    ['no Authorization header', {}],
    ['a malformed key', { authorization: 'Bearer plauder_nonsense' }],
    ['not Bearer', { authorization: 'Basic dXNlcjpwYXNz' }],
  ])('gets 401 with WWW-Authenticate and the error envelope: %s', async (_name, headers) => {
    const res = await http(`${server.url}/mcp`, {
      headers: { ...mcpHeaders, ...headers },
      body: initialize,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="plauder"');
    expect(res.json).toEqual({
      error: {
        code: 'invalid_api_key',
        message: expect.any(String),
        requestId: res.headers.get('x-request-id'),
      },
    });
  });

  it('gets 401 whatever the Content-Type, before the body is read', async () => {
    const { key } = await server.createKey();
    const res = await http(`${server.url}/mcp`, {
      headers: { ...mcpHeaders, authorization: `Bearer ${key}x`, 'content-type': 'json' },
      raw: '{',
    });
    expect(res.status).toBe(401);
    expect(res.json.error.code).toBe('invalid_api_key');
  });

  it('makes the SDK client fail to connect with HTTP 401', async () => {
    const { key } = await server.createKey();
    await server.services.keys.revoke(
      (await server.services.keys.authenticate(`Bearer ${key}`))?.id ?? '',
    );
    const error = await connectMcp(server, key).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(401);
  });
});

describe('GET and DELETE /mcp', () => {
  it('are not offered (stateless): 405 with Allow: POST, after the key check', async () => {
    const { key } = await server.createKey();
    for (const method of ['GET', 'DELETE']) {
      const res = await http(`${server.url}/mcp`, { method, key, headers: mcpHeaders });
      expect(res.status, method).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(res.json.error.code).toBe('method_not_allowed');
      const anonymous = await http(`${server.url}/mcp`, { method, headers: mcpHeaders });
      expect(anonymous.status, method).toBe(401);
    }
  });
});

describe('tool chat refusals', () => {
  it('refuses a used-up month with the reset time, not counted; usage still answers', async () => {
    const { client, used } = await newKey({ plan: 'tiny' });
    for (const message of ['one', 'two']) {
      expect((await callTool(client, 'chat', { message })).isError).toBeFalsy();
    }
    const refusal = await callTool(client, 'chat', { message: 'three' });
    expect(refusal.isError).toBe(true);
    const resetsAt = server.services.quota.monthOf(Date.now()).endMs;
    expect(textOf(refusal)).toMatch(/^Refused \(quota_exceeded\): /);
    expect(textOf(refusal)).toContain(`2 of 2 requests`);
    expect(textOf(refusal)).toContain(new Date(resetsAt).toISOString());
    expect(refusal._meta).toEqual({ 'plauder/code': 'quota_exceeded' });
    // Row 3 before rows 4-8: a bad message in a used-up month is a quota refusal too.
    expect(textOf(await callTool(client, 'chat', { message: '' }))).toMatch(/quota_exceeded/);
    expect(await used()).toBe(2);
    const usage = await callTool(client, 'usage');
    expect(usage.structuredContent).toMatchObject({
      plan: 'tiny',
      limit: 2,
      used: 2,
      remaining: 0,
    });
  });

  it('refuses a call over the per-minute limit with the time to wait, not counted', async () => {
    const { client, used } = await newKey({ plan: 'burst' });
    expect((await callTool(client, 'chat', { message: 'one' })).isError).toBeFalsy();
    const refusal = await callTool(client, 'chat', { message: 'two' });
    expect(refusal.isError).toBe(true);
    expect(textOf(refusal)).toMatch(
      /^Refused \(rate_limited\): .*1 of 1 requests are used this minute/,
    );
    expect(refusal._meta).toEqual({ 'plauder/code': 'rate_limited' });
    expect(await used()).toBe(1);
  });

  it('refuses an inactive plan before judging the message, not counted', async () => {
    const { client, used } = await newKey({ active: false });
    for (const args of [{ message: 'Hallo' }, { message: '' }, { message: 42 }]) {
      const result = await callTool(client, 'chat', args);
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^Refused \(plan_inactive\): .*operator/);
    }
    expect(await used()).toBe(0);
    expect((await callTool(client, 'usage')).structuredContent).toMatchObject({ active: false });
  });

  it.each([
    ['no message', {}, 'message_missing'],
    ['an empty message', { message: '' }, 'message_missing'],
    ['a whitespace message', { message: ' \n\t ' }, 'message_missing'],
    ['a null message', { message: null }, 'message_missing'],
    ['a number as message', { message: 42 }, 'message_invalid'],
    ['an array as message', { message: ['Hallo'] }, 'message_invalid'],
    ['a message over 4000 characters', { message: 'x'.repeat(4001) }, 'message_too_long'],
    ['a malformed sessionId', { message: 'Hallo', sessionId: 'a b' }, 'session_id_invalid'],
    ['a number as sessionId', { message: 'Hallo', sessionId: 7 }, 'session_id_invalid'],
    [
      'an overlong sessionId',
      { message: 'Hallo', sessionId: 's'.repeat(129) },
      'session_id_invalid',
    ],
    ['an unknown language', { message: 'Hallo', language: 'fr' }, 'language_invalid'],
    ['a number as language', { message: 'Hallo', language: 1 }, 'language_invalid'],
  ])('refuses %s as an error result, not counted', async (_name, args, code) => {
    const { client, used } = await newKey();
    const result = await callTool(client, 'chat', args);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`^Refused \\(${code}\\): .+ Nothing was counted`));
    expect(result._meta).toEqual({ 'plauder/code': code });
    expect(await used()).toBe(0);
  });

  it('accepts exactly 4000 characters and a null sessionId or language (= absent)', async () => {
    const { client, used } = await newKey();
    const long = await callTool(client, 'chat', { message: 'x'.repeat(4000) });
    expect(long.isError).toBeFalsy();
    const nulls = await callTool(client, 'chat', {
      message: 'Hi',
      sessionId: null,
      language: null,
    });
    expect(textOf(nulls)).toBe('de: Hi (0 earlier)');
    expect(await used()).toBe(2);
  });

  it('answers an unknown tool with a JSON-RPC error', async () => {
    const { client } = await newKey();
    const error = await callTool(client, 'chat_with_everyone', { message: 'Hallo' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    // One prefix, the client's own.
    expect((error as McpError).message).toBe('MCP error -32602: Unknown tool: chat_with_everyone');
  });
});

describe('a technical failure of the core', () => {
  it('is an error result without internals, refunded, and logged safely', async () => {
    const { client, used } = await newKey();
    const result = await callTool(client, 'chat', { message: 'fail', sessionId: 'broken-1' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^Failed \(core_unavailable\): .+ Nothing was counted/);
    expect(JSON.stringify(result)).not.toContain('SELECT');
    expect(JSON.stringify(result)).not.toContain('core.ts');
    expect(await used()).toBe(0);
    const failed = server.logs
      .map((line) => JSON.parse(line))
      .find((l) => l.msg === 'request failed');
    expect(failed).toMatchObject({ code: 'core_unavailable', error: { type: 'CoreError' } });
  });
});

describe('Idempotency-Key on the POST of a tools/call', () => {
  it('replays the first reply to a retry without counting it; another call with it is refused', async () => {
    const { key, used } = await newKey();
    const headers = { 'idempotency-key': 'mcp-retry-1' };
    const first = await connectMcp(server, key, headers);
    const retry = await connectMcp(server, key, headers);
    clients.push(first, retry);
    const args = { message: 'Hallo', sessionId: 'idem-1' };
    const original = await callTool(first, 'chat', args);
    const replayed = await callTool(retry, 'chat', args);
    expect(textOf(replayed)).toBe(textOf(original));
    expect(await used()).toBe(1);
    const reused = await callTool(retry, 'chat', { ...args, message: 'Tschüss' });
    expect(reused.isError).toBe(true);
    expect(textOf(reused)).toMatch(/^Refused \(idempotency_key_reused\): /);
    // A next call under a new key runs afresh and sees the one stored turn.
    const next = await connectMcp(server, key, { 'idempotency-key': 'mcp-retry-2' });
    clients.push(next);
    expect(textOf(await callTool(next, 'chat', args))).toBe('de: Hallo (1 earlier)');
    expect(await used()).toBe(2);
  });

  it('refuses a malformed Idempotency-Key as an error result, not counted', async () => {
    const { key, used } = await newKey();
    const client = await connectMcp(server, key, { 'idempotency-key': 'k'.repeat(256) });
    clients.push(client);
    const result = await callTool(client, 'chat', { message: 'Hallo' });
    expect(textOf(result)).toMatch(/^Refused \(idempotency_key_invalid\): /);
    expect(await used()).toBe(0);
  });
});

describe('a client that leaves during a chat call', () => {
  it('cancels the core, refunds the reservation and is logged as client_closed', async () => {
    const { key, id, used } = await newKey();
    const client = await connectMcp(server, key);
    const before = scripted.waiting.length;
    const call = callTool(client, 'chat', { message: 'wait', sessionId: 'leaving-1' }).catch(
      (e: unknown) => e,
    );
    await vi.waitFor(() => expect(scripted.waiting.length).toBe(before + 1));
    await client.close();
    await call;
    const signal = scripted.waiting[before];
    await vi.waitFor(() => expect(signal?.aborted).toBe(true));
    await vi.waitFor(async () => expect(await used()).toBe(0));
    await vi.waitFor(() =>
      expect(
        server.logs
          .map((line) => JSON.parse(line))
          .find((l) => l.route === '/mcp' && l.keyId === id && l.outcome === 'client_closed'),
      ).toMatchObject({ status: 499 }),
    );
    expect((await http(`${server.url}/api/sessions/leaving-1`, { key })).status).toBe(404);
  });
});

describe('logs and metrics of /mcp', () => {
  it('writes one safe line per request, labelled with the chat outcome', async () => {
    const { key, id, client } = await newKey();
    const message = 'Geheime Nachricht 4711';
    await callTool(client, 'chat', { message, sessionId: 'secret-session-0815' });
    await callTool(client, 'chat', { message: '' });
    await callTool(client, 'usage');
    const lines = server.logs.map((line) => JSON.parse(line)).filter((l) => l.keyId === id);
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests.every((l) => l.route === '/mcp')).toBe(true);
    // The client asks once for a stream of server messages (GET: 405), then POSTs
    // initialize, notifications/initialized (202) and the three tools/call.
    expect(requests.map((l) => `${l.method} ${l.status}`).sort()).toEqual([
      'GET 405',
      'POST 200',
      'POST 200',
      'POST 200',
      'POST 200',
      'POST 202',
    ]);
    const outcomes = requests.filter((l) => l.method === 'POST').map((l) => l.outcome);
    expect(outcomes.filter(Boolean)).toEqual(['reply', 'message_missing']);
    const all = server.logs.join('\n');
    for (const secret of [message, 'secret-session-0815', key, key.slice(0, 20)]) {
      expect(all).not.toContain(secret);
    }
    const metrics = (await http(`${server.url}/metrics`)).text;
    expect(metrics).toMatch(
      /plauder_chat_outcomes_total\{endpoint="\/mcp",outcome="reply"\} [1-9]/,
    );
    expect(metrics).toContain('endpoint="/mcp",outcome="message_missing"');
    expect(metrics).toContain('route="/mcp",method="POST",status="200"');
  });
});

it('answers only errors that its routes declare', () => expectDeclaredAnswers(server));
