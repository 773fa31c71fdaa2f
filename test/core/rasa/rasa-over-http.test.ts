import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_FALLBACKS } from '../../../src/core/rasa/rasa-config.js';
import { chat, http, startTestServer, type TestServer } from '../../helpers/test-server.js';
import { type RasaBot, startRasaBot } from './rasa-bot-process.js';

// The whole path: the real server with PLAUDER_CORE=rasa in front of a real bot process.
let bot: RasaBot;
let server: TestServer;
let alice: { id: string; key: string };
let bob: { id: string; key: string };

beforeAll(async () => {
  bot = await startRasaBot();
  server = await startTestServer({
    env: {
      PLAUDER_CORE: 'rasa',
      PLAUDER_RASA_URL: bot.url,
      PLAUDER_RASA_TIMEOUT: '300ms',
      PLAUDER_RASA_MAX_RETRIES: '1',
      PLAUDER_RASA_RETRY_BASE_DELAY: '10ms',
    },
  });
  alice = await server.createKey({ name: 'alice' });
  bob = await server.createKey({ name: 'bob' });
});
afterAll(async () => {
  await server?.close();
  await bot?.stop();
});
beforeEach(() => bot.reset());

const used = (keyId: string) =>
  server.services.usage.used(keyId, server.services.quota.monthOf(Date.now()).month);

async function sentBodies() {
  return (await bot.requests()).map((request) => request.body ?? {});
}

describe('the rasa core behind the API', () => {
  it('sends one sender for every turn of a session, on both endpoints, so the bot keeps it', async () => {
    const first = await chat(server, alice.key, { message: 'Hallo', sessionId: 'shop-1' });
    const second = await chat(
      server,
      alice.key,
      { message: 'And now in English', sessionId: 'shop-1' },
      '/api/chat-en',
    );
    expect(first.json).toEqual({ reply: 'echo: Hallo' });
    expect(second.json).toEqual({ reply: 'echo: And now in English' });

    const [one, two] = await sentBodies();
    expect(one?.sender).toEqual(expect.any(String));
    expect(two?.sender).toBe(one?.sender);
    expect([one?.metadata, two?.metadata]).toEqual([{ language: 'de' }, { language: 'en' }]);
    // The turns are plauder's session memory too.
    const stored = await http(`${server.url}/api/sessions/shop-1`, { key: alice.key });
    expect(stored.json.turns).toHaveLength(2);
  });

  it('sends another sender for another session, another key, and each turn without a session', async () => {
    await chat(server, alice.key, { message: 'a', sessionId: 'shop-1' });
    await chat(server, alice.key, { message: 'b', sessionId: 'shop-2' });
    await chat(server, bob.key, { message: 'c', sessionId: 'shop-1' });
    await chat(server, alice.key, { message: 'd' });
    await chat(server, alice.key, { message: 'e' });
    const senders = (await sentBodies()).map((body) => String(body.sender));

    expect(new Set(senders).size).toBe(5);
    for (const sender of senders) {
      for (const secret of [alice.id, bob.id, alice.key, bob.key, 'shop-1', 'shop-2']) {
        expect(sender).not.toContain(secret);
      }
    }
  });

  it('answers the fallback in the endpoint language to an empty answer, counts it and logs it without text', async () => {
    const before = await used(alice.id);
    await bot.script({ messages: [] }, { messages: [] });
    const de = await chat(server, alice.key, { message: 'Streng geheim' });
    const en = await chat(server, alice.key, { message: 'Top secret' }, '/api/chat-en');

    expect(de.json).toEqual({ reply: DEFAULT_FALLBACKS.de });
    expect(en.json).toEqual({ reply: DEFAULT_FALLBACKS.en });
    expect(await used(alice.id)).toBe(before + 2);
    const notices = server.logs.filter((line) => line.includes('"core notice"'));
    expect(notices).toHaveLength(2);
    expect(JSON.parse(notices[0] ?? '{}')).toMatchObject({
      level: 40,
      notice: { kind: 'empty_answer', core: 'rasa', language: 'de', messages: 0 },
      reqId: de.headers.get('x-request-id'),
    });
    expect(notices.join('\n')).not.toMatch(/geheim|secret/i);
  });

  const failures: Array<[string, () => Promise<void>, string]> = [
    [
      'fails with 5xx on every attempt',
      () => bot.script({ status: 500 }, { status: 503 }),
      'core_unavailable',
    ],
    ['answers garbage', () => bot.script({ raw: '<html>oops</html>' }), 'core_unavailable'],
    ['hangs past the timeout', () => bot.script({ hang: true }, { hang: true }), 'core_timeout'],
  ];
  it.each(failures)(
    'answers 500 when the bot %s, counts nothing and leaks nothing',
    async (_label, arrange, code) => {
      const before = await used(alice.id);
      await arrange();
      const res = await chat(server, alice.key, { message: 'Hallo' });
      expect(res.status).toBe(500);
      expect(res.json.error.code).toBe(code);
      expect(res.text).not.toMatch(/oops|html|rasa/);
      expect(await used(alice.id)).toBe(before);
      const next = await chat(server, alice.key, { message: 'Noch da?' });
      expect(next.json).toEqual({ reply: 'echo: Noch da?' });
    },
  );
});
