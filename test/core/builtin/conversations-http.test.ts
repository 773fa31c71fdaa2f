import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, startTestServer, type TestServer } from '../../helpers/test-server.js';
import { type Conversation, conversations, replyProblems } from './conversations.js';

// The same conversation table as conversations.test.ts, played over HTTP through the real
// server with the default (built-in) core: memory comes from the stored session.
let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer({ env: { PLAUDER_CORE: 'builtin' } });
  ({ key } = await server.createKey({ plan: 'plus' }));
});
afterAll(() => server.close());

async function play(conversation: Conversation): Promise<string[]> {
  const sessionId = `conv-${randomUUID()}`;
  const problems: string[] = [];
  for (const [i, turn] of conversation.turns.entries()) {
    const language = turn.language ?? conversation.language;
    const path = language === 'de' ? '/api/chat' : '/api/chat-en';
    const body =
      conversation.session === false
        ? { message: turn.message }
        : { message: turn.message, sessionId };
    const res = await chat(server, key, body, path);
    if (res.status !== 200 || typeof res.json?.reply !== 'string' || res.json.error !== undefined) {
      problems.push(`turn ${i + 1}: status ${res.status} ${res.text.slice(0, 120)}`);
      continue;
    }
    for (const problem of replyProblems(turn, res.json.reply)) {
      problems.push(`turn ${i + 1} "${turn.message}": ${problem}\n    reply: ${res.json.reply}`);
    }
  }
  return problems;
}

describe('built-in core conversations over HTTP', () => {
  it.each(conversations.map((c) => [c.name, c] as const))('%s', async (_name, conversation) => {
    expect(await play(conversation)).toEqual([]);
  });

  it('remembers a name only within its session and only for its key', async () => {
    const other = await server.createKey();
    const introduce = await chat(
      server,
      key,
      { message: 'My name is Annabell', sessionId: 'names' },
      '/api/chat-en',
    );
    expect(introduce.json.reply).toContain('Annabell');
    const same = await chat(
      server,
      key,
      { message: 'What is my name?', sessionId: 'names' },
      '/api/chat-en',
    );
    expect(same.json.reply).toContain('Annabell');
    const German = await chat(server, key, { message: 'Wie heiße ich?', sessionId: 'names' });
    expect(German.json.reply).toContain('Annabell');
    const otherKey = await chat(
      server,
      other.key,
      { message: 'What is my name?', sessionId: 'names' },
      '/api/chat-en',
    );
    expect(otherKey.json.reply).not.toContain('Annabell');
    const noSession = await chat(server, key, { message: 'What is my name?' }, '/api/chat-en');
    expect(noSession.json.reply).not.toContain('Annabell');
  });
});
