/**
 * /mcp against the ways a request can carry no valid key, and the canary: at trace level,
 * neither the logs nor the database files hold a key, a message, a reply's request text
 * or a session id that went through MCP (turns and kept idempotent outcomes are sealed).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startTestServer, type TestServer } from '../helpers/test-server.js';
import { callTool, connectMcp, textOf } from './mcp-client.js';

let server: TestServer;
const keys = { valid: '', revoked: '', rotatedOld: '', id: '' };
const secrets: string[] = [];
const canary = (label: string) => {
  const text = `${label}-${randomBytes(6).toString('hex')}`;
  secrets.push(text);
  return text;
};

beforeAll(async () => {
  server = await startTestServer({
    env: { PLAUDER_CORE: 'placeholder', PLAUDER_LOG_LEVEL: 'trace' },
  });
  const valid = await server.createKey();
  keys.valid = valid.key;
  keys.id = valid.id;
  const revoked = await server.createKey();
  await server.services.keys.revoke(revoked.id);
  keys.revoked = revoked.key;
  const rotated = await server.createKey();
  const rotation = await server.services.keys.rotate(rotated.id, 0);
  if (!rotation.ok) throw new Error('rotate failed');
  keys.rotatedOld = rotated.key;
  secrets.push(valid.key, revoked.key, rotated.key, rotation.value.key);
});
afterAll(() => server?.close());

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'x', version: '1' },
  },
};

describe('POST /mcp without a valid key', () => {
  it.each<[string, () => { headers?: Record<string, string>; query?: string }]>([
    ['the key is revoked', () => ({ headers: { authorization: `Bearer ${keys.revoked}` } })],
    [
      'the key was rotated away',
      () => ({ headers: { authorization: `Bearer ${keys.rotatedOld}` } }),
    ],
    ['the key is in the query string', () => ({ query: `?key=${keys.valid}` })],
    ['the key is in an X-API-Key header', () => ({ headers: { 'x-api-key': keys.valid } })],
    ['the scheme is Basic', () => ({ headers: { authorization: `Basic ${keys.valid}` } })],
    [
      'the key is truncated',
      () => ({ headers: { authorization: `Bearer ${keys.valid.slice(0, -1)}` } }),
    ],
  ])('answers 401 invalid_api_key and no MCP when %s', async (_name, make) => {
    const { headers = {}, query = '' } = make();
    const res = await http(`${server.url}/mcp${query}`, {
      headers: { accept: 'application/json, text/event-stream', ...headers },
      body: initialize,
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="plauder"');
    expect(res.json.error.code).toBe('invalid_api_key');
    expect(res.json.jsonrpc).toBeUndefined();
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('canary', () => {
  it('keeps keys, messages and session ids that went through MCP out of the logs and the database', async () => {
    const idempotencyKey = canary('idem');
    const client = await connectMcp(server, keys.valid, { 'idempotency-key': idempotencyKey });
    try {
      const sessionId = canary('mcp-session');
      const message = canary('mcp-message');
      const reply = await callTool(client, 'chat', { message, sessionId, language: 'en' });
      expect(reply.isError).toBeFalsy();
      // Refused calls carry their text into the logs no more than replies do.
      const refused = await callTool(client, 'chat', {
        message: canary('other-message'),
        sessionId,
      });
      expect(textOf(refused)).toMatch(/idempotency_key_reused/);
      await callTool(client, 'forget_session', { sessionId: canary('unknown-session') });
    } finally {
      await client.close();
    }
    const stored = await server.database.contents();
    const logs = server.logs.join('\n');
    expect(logs).toContain('"route":"/mcp"');
    for (const secret of secrets) {
      expect(logs.includes(secret), `logs contain ${secret.slice(0, 16)}…`).toBe(false);
      expect(
        stored.includes(Buffer.from(secret)),
        `database contains ${secret.slice(0, 16)}…`,
      ).toBe(false);
    }
    expect((await http(`${server.url}/api/usage`, { key: keys.valid })).json.used).toBe(1);
  });
});
