import { describe, expect } from 'vitest';
import { DEFAULT_FALLBACKS } from '../../../src/core/rasa/rasa-config.js';
import { test as base, rasaEnv } from '../../helpers/fixtures.js';
import { chat, http, startTestServer } from '../../helpers/test-server.js';
import type { RasaBot } from './rasa-bot-process.js';

// The whole path: the real server with PLAUDER_CORE=rasa in front of a real bot process.
// One server for the file, in front of the worker's bot; each test asks for `rasaBot`,
// which resets the bot before it.
const test = base.extend('served', { scope: 'file' }, async ({ rasaBotProcess }, { onCleanup }) => {
  const server = await startTestServer({
    env: rasaEnv(rasaBotProcess, {
      PLAUDER_RASA_TIMEOUT: '300ms',
      PLAUDER_RASA_MAX_RETRIES: '1',
      PLAUDER_RASA_RETRY_BASE_DELAY: '10ms',
    }),
  });
  onCleanup(() => server.close());
  const alice = await server.createKey({ name: 'alice' });
  const bob = await server.createKey({ name: 'bob' });
  const used = (keyId: string) =>
    server.services.usage.used(keyId, server.services.quota.monthOf(Date.now()).month);
  return { server, alice, bob, used };
});

async function sentBodies(bot: RasaBot) {
  return (await bot.requests()).map((request) => request.body ?? {});
}

describe('the rasa core behind the API', () => {
  test('sends one sender for every turn of a session, on both endpoints, so the bot keeps it', async ({
    served: { server, alice },
    rasaBot,
  }) => {
    const first = await chat(server, alice.key, { message: 'Hallo', sessionId: 'shop-1' });
    const second = await chat(
      server,
      alice.key,
      { message: 'And now in English', sessionId: 'shop-1' },
      '/api/chat-en',
    );
    expect(first.json).toEqual({ reply: 'echo: Hallo' });
    expect(second.json).toEqual({ reply: 'echo: And now in English' });

    const [one, two] = await sentBodies(rasaBot);
    expect(one?.sender).toEqual(expect.any(String));
    expect(two?.sender).toBe(one?.sender);
    expect([one?.metadata, two?.metadata]).toEqual([{ language: 'de' }, { language: 'en' }]);
    // The turns are plauder's session memory too.
    const stored = await http(`${server.url}/api/sessions/shop-1`, { key: alice.key });
    expect(stored.json.turns).toHaveLength(2);
  });

  test('sends another sender for another session, another key, and each turn without a session', async ({
    served: { server, alice, bob },
    rasaBot,
  }) => {
    await chat(server, alice.key, { message: 'a', sessionId: 'shop-1' });
    await chat(server, alice.key, { message: 'b', sessionId: 'shop-2' });
    await chat(server, bob.key, { message: 'c', sessionId: 'shop-1' });
    await chat(server, alice.key, { message: 'd' });
    await chat(server, alice.key, { message: 'e' });
    const senders = (await sentBodies(rasaBot)).map((body) => String(body.sender));

    expect(new Set(senders).size).toBe(5);
    for (const sender of senders) {
      for (const secret of [alice.id, bob.id, alice.key, bob.key, 'shop-1', 'shop-2']) {
        expect(sender).not.toContain(secret);
      }
    }
  });

  test('answers the fallback in the endpoint language to an empty answer, counts it and logs it without text', async ({
    served: { server, alice, used },
    rasaBot,
  }) => {
    const before = await used(alice.id);
    await rasaBot.script({ messages: [] }, { messages: [] });
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

  const failures: Array<[string, (bot: RasaBot) => Promise<void>, string]> = [
    [
      'fails with 5xx on every attempt',
      (bot) => bot.script({ status: 500 }, { status: 503 }),
      'core_unavailable',
    ],
    ['answers garbage', (bot) => bot.script({ raw: '<html>oops</html>' }), 'core_unavailable'],
    ['hangs past the timeout', (bot) => bot.script({ hang: true }, { hang: true }), 'core_timeout'],
  ];
  test.for(failures)(
    'answers 500 when the bot %s, counts nothing and leaks nothing',
    async ([, arrange, code], { served: { server, alice, used }, rasaBot }) => {
      const before = await used(alice.id);
      await arrange(rasaBot);
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
