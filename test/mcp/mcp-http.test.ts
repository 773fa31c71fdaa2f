/**
 * The HTTP side of /mcp, as a client without the SDK sees it: stateless JSON-RPC over
 * POST (no initialize needed, no Mcp-Session-Id), the transport's JSON-RPC errors, and
 * the headers every plauder answer has plus the quota headers of a chat call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpResult, http, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
  ({ key } = await server.createKey());
});
afterAll(() => server?.close());

const ACCEPT = 'application/json, text/event-stream';

function post(body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  return http(`${server.url}/mcp`, { key, headers: { accept: ACCEPT, ...headers }, body });
}

function chatCall(id: number, args: Record<string, unknown>) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'chat', arguments: args } };
}

describe('POST /mcp without the SDK', () => {
  it('answers a tools/call on its own (stateless) as JSON, with the quota headers', async () => {
    const res = await post(chatCall(7, { message: 'Hallo' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.json).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { content: [{ type: 'text', text: expect.any(String) }] },
    });
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('999');
    expect(res.headers.get('ratelimit')).toMatch(/^"monthly";r=999;t=\d+$/);
  });

  it('marks the replay of an Idempotency-Key with Idempotent-Replayed: true', async () => {
    const headers = { 'idempotency-key': 'raw-retry-1' };
    const first = await post(chatCall(1, { message: 'Hallo' }), headers);
    const again = await post(chatCall(2, { message: 'Hallo' }), headers);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json.result).toEqual(first.json.result);
    expect(again.json.id).toBe(2);
    expect(again.headers.get('x-ratelimit-remaining')).toBe(
      first.headers.get('x-ratelimit-remaining'),
    );
  });

  it('answers tools/list and usage without quota headers (not chat calls)', async () => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(res.json.result.tools).toHaveLength(3);
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('accepts a notification with 202 and no body', async () => {
    const res = await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
  });

  it.each([
    ['Accept without text/event-stream', { accept: 'application/json' }, '{}', 406, -32000],
    ['a Content-Type other than JSON', { 'content-type': 'text/plain' }, '{}', 415, -32000],
    ['malformed JSON', {}, '{"jsonrpc": ', 400, -32700],
    ['JSON that is not JSON-RPC', {}, '{"hello": 1}', 400, -32700],
  ])('refuses %s with a JSON-RPC error', async (_name, headers, raw, status, code) => {
    const res = await http(`${server.url}/mcp`, {
      method: 'POST',
      key,
      headers: { accept: ACCEPT, 'content-type': 'application/json', ...headers },
      raw,
    });
    expect(res.status).toBe(status);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', error: { code } });
  });

  it('refuses a body over 64 KiB with 413 payload_too_large', async () => {
    const res = await post(chatCall(1, { message: 'x'.repeat(70_000) }));
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe('payload_too_large');
  });
});
