/**
 * What /mcp makes of input no agent should send: arguments that are not an object or are
 * nested absurdly deep, bytes that are not UTF-8, a charset other than UTF-8. Each gets a
 * clear JSON-RPC error (or HTTP refusal), as /api and /v1 refuse the same, and no stack trace
 * in the log.
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

function post(raw: string | Buffer, headers: Record<string, string> = {}): Promise<HttpResult> {
  return http(`${server.url}/mcp`, {
    key,
    headers: { accept: ACCEPT, 'content-type': 'application/json', ...headers },
    raw,
  });
}

function chatCall(id: number, args: unknown) {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'chat', arguments: args } };
}

const usedNow = async () => {
  const res = await http(`${server.url}/api/usage`, { key });
  return res.json.used as number;
};

describe('POST /mcp with arguments no agent should send', () => {
  it('answers arguments nested 20 000 deep with -32602 naming the arguments, and logs no stack trace', async () => {
    const deep = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
    const logsBefore = server.logs.length;
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"message":"Hallo","x":${deep}}}}`;
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32602,
        message: expect.stringMatching(/^Invalid params: "arguments" .*nested/),
      },
    });
    const lines = server.logs.slice(logsBefore);
    expect(lines.join('\n')).not.toMatch(/stack|"level":50/);
  });

  it.each([
    ['[]', []],
    ['a string', 'Hallo'],
    ['a number', 7],
  ])(
    'answers arguments that are %s with -32602 and an English sentence, not a schema dump',
    async (_what, args) => {
      const before = await usedNow();
      const res = await post(JSON.stringify(chatCall(2, args)));
      expect(res.status).toBe(200);
      expect(res.json.error.code).toBe(-32602);
      expect(res.json.error.message).toBe(
        'Invalid params: "arguments" must be a JSON object, such as {"message": "Hallo"}.',
      );
      expect(await usedNow()).toBe(before);
    },
  );

  it('answers the good calls of a batch and -32602 for the bad one', async () => {
    const res = await post(
      JSON.stringify([
        chatCall(1, { message: 'Hallo' }),
        chatCall(2, []),
        chatCall(3, { message: 'Du' }),
      ]),
    );
    expect(res.status).toBe(200);
    const byId = new Map((res.json as Array<{ id: number }>).map((m) => [m.id, m]));
    expect(byId.get(1)).toMatchObject({ result: { content: [{ type: 'text' }] } });
    expect(byId.get(2)).toMatchObject({ error: { code: -32602 } });
    expect(byId.get(3)).toMatchObject({ result: { content: [{ type: 'text' }] } });
  });
});

describe('POST /mcp with bytes that are not what they claim', () => {
  it('refuses a body that is not UTF-8 with a JSON-RPC parse error, as /api and /v1 refuse it', async () => {
    const before = await usedNow();
    const good = Buffer.from(JSON.stringify(chatCall(4, { message: 'Hallo X' })));
    const bad = Buffer.from(good);
    bad[bad.indexOf('X')] = 0xff;
    const res = await post(bad);
    expect(res.status).toBe(400);
    expect(res.json).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'Parse error: the body is not valid UTF-8.' },
    });
    expect(await usedNow()).toBe(before);
  });

  it('refuses a charset other than UTF-8 with 415 on /mcp, body_invalid on /api and 400 on /v1', async () => {
    const contentType = 'application/json; charset=utf-16';
    const mcp = await post(JSON.stringify(chatCall(5, { message: 'Hallo' })), {
      'content-type': contentType,
    });
    expect(mcp.status).toBe(415);
    expect(mcp.json.error.message).toMatch(/charset/);

    const api = await http(`${server.url}/api/chat`, {
      key,
      headers: { 'content-type': contentType },
      raw: JSON.stringify({ message: 'Hallo' }),
    });
    expect(api.status).toBe(200);
    expect(api.json.error.code).toBe('body_invalid');

    const v1 = await http(`${server.url}/v1/chat/completions`, {
      key,
      headers: { 'content-type': contentType },
      raw: JSON.stringify({ model: 'plauder-de', messages: [{ role: 'user', content: 'Hallo' }] }),
    });
    expect(v1.status).toBe(400);
    expect(v1.json.error.code).toBe('body_invalid');

    // UTF-8 named in any spelling is accepted.
    const named = await post(JSON.stringify(chatCall(6, { message: 'Hallo' })), {
      'content-type': 'application/json; charset="UTF-8"',
    });
    expect(named.json.result.content[0].type).toBe('text');
  });
});
