/**
 * MCP at /mcp (docs/contract.md, "MCP"), driven by the official SDK client over a real server with
 * the built-in core: the tools an agent sees, chat with and without memory in both
 * languages, usage and forget_session, and sessions that stay private to their key.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, startTestServer, type TestServer } from '../helpers/test-server.js';
import { callTool, connectMcp, textOf } from './mcp-client.js';

let server: TestServer;
let key: string;
let client: Client;

beforeAll(async () => {
  server = await startTestServer();
  ({ key } = await server.createKey());
  client = await connectMcp(server, key);
});
afterAll(async () => {
  await client?.close();
  await server?.close();
});

async function used(apiKey = key): Promise<number> {
  return (await http(`${server.url}/api/usage`, { key: apiKey })).json.used;
}

describe('tools/list', () => {
  it('offers chat, usage and forget_session with descriptions and input schemas', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['chat', 'usage', 'forget_session']);
    for (const tool of tools) {
      expect(tool.description?.length, tool.name).toBeGreaterThan(100);
      expect(tool.inputSchema.type, tool.name).toBe('object');
    }
    const [chat, usage, forget] = tools;
    expect(chat?.inputSchema.required).toEqual(['message']);
    expect(chat?.inputSchema.properties).toMatchObject({
      message: { type: 'string', minLength: 1, maxLength: 4000 },
      language: { type: 'string', enum: ['de', 'en'], default: 'de' },
      sessionId: { type: 'string', pattern: '^[A-Za-z0-9._:@-]{1,128}$' },
    });
    expect(usage?.inputSchema.properties).toEqual({});
    expect(usage?.annotations?.readOnlyHint).toBe(true);
    expect(forget?.inputSchema.required).toEqual(['sessionId']);
    expect(forget?.annotations?.destructiveHint).toBe(true);
  });

  it('introduces the server as plauder, stateless (no MCP session id)', () => {
    expect(client.getServerVersion()?.name).toBe('plauder');
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    expect(client.getInstructions()).toContain('chat');
  });
});

describe('tool chat', () => {
  it('replies in German by default and in English with language "en", each call counted', async () => {
    const before = await used();
    const german = await callTool(client, 'chat', { message: 'Hallo, wie geht es dir?' });
    expect(german.isError).toBeFalsy();
    expect(textOf(german).length).toBeGreaterThan(0);
    const english = await callTool(client, 'chat', {
      message: 'How many requests do I get per month?',
      language: 'en',
    });
    expect(english.isError).toBeFalsy();
    expect(textOf(english)).toMatch(/1000|1,000/);
    expect(await used()).toBe(before + 2);
  });

  it('gives the same reply as /api/chat-en for the same message', async () => {
    const message = 'How long are sessions kept?';
    const viaMcp = await callTool(client, 'chat', { message, language: 'en' });
    const viaHttp = await http(`${server.url}/api/chat-en`, { key, body: { message } });
    expect(textOf(viaMcp)).toBe(viaHttp.json.reply);
  });

  it('remembers earlier calls of a session, across languages, and nothing without one', async () => {
    const sessionId = 'mcp-memory-1';
    const intro = await callTool(client, 'chat', {
      message: 'My name is Annabell',
      language: 'en',
      sessionId,
    });
    expect(textOf(intro)).toContain('Annabell');
    const english = await callTool(client, 'chat', {
      message: 'What is my name?',
      language: 'en',
      sessionId,
    });
    expect(textOf(english)).toContain('Annabell');
    const german = await callTool(client, 'chat', { message: 'Wie heiße ich?', sessionId });
    expect(textOf(german)).toContain('Annabell');
    const alone = await callTool(client, 'chat', { message: 'What is my name?', language: 'en' });
    expect(textOf(alone)).not.toContain('Annabell');

    // The session is the one /api/sessions shows: one conversation, whichever front door.
    const stored = await http(`${server.url}/api/sessions/${sessionId}`, { key });
    expect(stored.json.turns.map((turn: { language: string }) => turn.language)).toEqual([
      'en',
      'en',
      'de',
    ]);
  });
});

describe('tool usage', () => {
  it('returns the /api/usage object as JSON text and structured content, not counted', async () => {
    await callTool(client, 'chat', { message: 'Hallo' });
    const result = await callTool(client, 'usage');
    expect(result.isError).toBeFalsy();
    const usage = JSON.parse(textOf(result));
    expect(result.structuredContent).toEqual(usage);
    const viaHttp = (await http(`${server.url}/api/usage`, { key })).json;
    expect(usage).toEqual(viaHttp);
    expect(usage).toMatchObject({ plan: 'standard', active: true, limit: 1000 });
    expect(usage.used).toBeGreaterThan(0);
    expect(usage.remaining).toBe(1000 - usage.used);
    expect(new Date(usage.resetsAt).getUTCDate()).toBe(1);
    await callTool(client, 'usage');
    expect(await used()).toBe(usage.used);
  });
});

describe('tool forget_session', () => {
  it('deletes a session of the key for good, then says there is none; never counted', async () => {
    const sessionId = 'mcp-forget-1';
    await callTool(client, 'chat', { message: 'My name is Bertrand', language: 'en', sessionId });
    const before = await used();

    const forgot = await callTool(client, 'forget_session', { sessionId });
    expect(forgot.isError).toBeFalsy();
    expect(forgot.structuredContent).toEqual({ sessionId, deleted: true });
    expect(textOf(forgot)).toContain('deleted');
    expect((await http(`${server.url}/api/sessions/${sessionId}`, { key })).status).toBe(404);

    const again = await callTool(client, 'forget_session', { sessionId });
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent).toEqual({ sessionId, deleted: false });
    expect(textOf(again)).toMatch(/no stored session/i);
    expect(await used()).toBe(before);

    const after = await callTool(client, 'chat', {
      message: 'What is my name?',
      language: 'en',
      sessionId,
    });
    expect(textOf(after)).not.toContain('Bertrand');
  });

  it('refuses a sessionId that is missing or malformed, as an error result', async () => {
    for (const args of [{}, { sessionId: '' }, { sessionId: 'a b' }, { sessionId: 42 }]) {
      const result = await callTool(client, 'forget_session', args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(textOf(result)).toMatch(/^Refused \(session_id_invalid\): /);
    }
  });
});

describe('sessions under another key', () => {
  it('cannot be read through chat nor forgotten by another key', async () => {
    const sessionId = 'mcp-private-1';
    await callTool(client, 'chat', { message: 'My name is Cordelia', language: 'en', sessionId });
    const other = await server.createKey();
    const intruder = await connectMcp(server, other.key);
    try {
      const forget = await callTool(intruder, 'forget_session', { sessionId });
      expect(forget.structuredContent).toEqual({ sessionId, deleted: false });
      const ask = await callTool(intruder, 'chat', {
        message: 'What is my name?',
        language: 'en',
        sessionId,
      });
      expect(textOf(ask)).not.toContain('Cordelia');
    } finally {
      await intruder.close();
    }
    // The owner's session is untouched by both.
    const mine = await callTool(client, 'chat', {
      message: 'What is my name?',
      language: 'en',
      sessionId,
    });
    expect(textOf(mine)).toContain('Cordelia');
  });
});
