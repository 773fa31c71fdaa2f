import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRasaCore } from '../../../src/core/rasa/create-rasa-core.js';
import { createTurnSealer } from '../../../src/sessions/turn-sealer.js';
import { ask, type RasaBot, startRasaBot, testOptions } from './rasa-bot-process.js';
import { test } from './rasa-test.js';

async function senders(bot: RasaBot): Promise<unknown[]> {
  return (await bot.requests()).map((request) => request.body?.sender);
}

describe('rasa core: the request it sends', () => {
  test('posts sender, message and the language in metadata to the REST webhook', async ({
    rasaBot,
    openCore,
  }) => {
    const reply = await openCore().reply(ask('Hallo Bot', { conversationId: 'conv-1' }));

    expect(reply).toBe('echo: Hallo Bot');
    const [request, ...others] = await rasaBot.requests();
    expect(others).toEqual([]);
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/webhooks/rest/webhook');
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.body).toEqual({
      sender: 'conv-1',
      message: 'Hallo Bot',
      metadata: { language: 'de' },
    });
  });

  test('tells one bot the language of each request in metadata.language', async ({
    rasaBot,
    openCore,
  }) => {
    const core = openCore();
    await core.reply(ask('Hallo', { language: 'de' }));
    await core.reply(ask('Hello', { language: 'en' }));
    const languages = (await rasaBot.requests()).map((r) => r.body?.metadata);
    expect(languages).toEqual([{ language: 'de' }, { language: 'en' }]);
  });

  test('is named rasa and sends nothing of the memory window', async ({ rasaBot, openCore }) => {
    const history = [{ message: 'früher', reply: 'damals', language: 'de' as const }];
    const core = openCore();
    await core.reply(ask('jetzt', { history }));
    expect(core.name).toBe('rasa');
    expect((await rasaBot.requests())[0]?.rawBody).not.toMatch(/früher|damals/);
  });
});

describe('rasa core: one bot per language', () => {
  let german: RasaBot;
  let english: RasaBot;
  beforeAll(async () => {
    [german, english] = await Promise.all([startRasaBot('de-bot'), startRasaBot('en-bot')]);
  });
  afterAll(() => Promise.all([german.stop(), english.stop()]));

  it('sends each language to its own bot and takes the reply from it', async () => {
    const core = createRasaCore(testOptions({ de: german.url, en: english.url }));
    try {
      await expect(core.reply(ask('Hallo', { language: 'de' }))).resolves.toBe(
        'de-bot echo: Hallo',
      );
      await expect(core.reply(ask('Hello', { language: 'en' }))).resolves.toBe(
        'en-bot echo: Hello',
      );
    } finally {
      await core.close?.();
    }
    const [de, en] = await Promise.all([german.requests(), english.requests()]);
    expect(de.map((r) => r.body)).toEqual([
      expect.objectContaining({ message: 'Hallo', metadata: { language: 'de' } }),
    ]);
    expect(en.map((r) => r.body)).toEqual([
      expect.objectContaining({ message: 'Hello', metadata: { language: 'en' } }),
    ]);
  });
});

describe('rasa core: the sender', () => {
  test('is the conversationId on every turn of a conversation, so the bot keeps its tracker', async ({
    rasaBot,
    openCore,
  }) => {
    const core = openCore();
    for (const message of ['eins', 'zwei', 'drei']) {
      await core.reply(ask(message, { conversationId: 'abc' }));
    }
    expect(await senders(rasaBot)).toEqual(['abc', 'abc', 'abc']);
  });

  test('is a fresh random id for every request without a conversation', async ({
    rasaBot,
    openCore,
  }) => {
    const core = openCore();
    await core.reply(ask('eins'));
    await core.reply(ask('zwei'));
    const [first, second] = await senders(rasaBot);
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(second).toMatch(/^[0-9a-f-]{36}$/);
    expect(first).not.toBe(second);
  });
});

describe('the conversationId a session gives the core', () => {
  const secret = randomBytes(32);
  const sealer = createTurnSealer(secret);

  it('is stable for one key id and sessionId, also under a new sealer with the same secret', () => {
    const id = sealer.conversationId('key_1', 'chat-7');
    expect(sealer.conversationId('key_1', 'chat-7')).toBe(id);
    expect(createTurnSealer(Buffer.from(secret)).conversationId('key_1', 'chat-7')).toBe(id);
  });

  it('differs between keys, between sessions and between secrets', () => {
    const ids = new Set([
      sealer.conversationId('key_1', 'chat-7'),
      sealer.conversationId('key_2', 'chat-7'),
      sealer.conversationId('key_1', 'chat-8'),
      // The separator keeps ('key_1', 'x') and ('key_1x', '') apart.
      sealer.conversationId('key_1chat-7', ''),
      createTurnSealer(randomBytes(32)).conversationId('key_1', 'chat-7'),
    ]);
    expect(ids.size).toBe(5);
  });

  it('reveals neither the key id nor the sessionId, and is not the stored session hash', () => {
    const id = sealer.conversationId('key_Zx81QpLm', 'order-4711');
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(id).not.toContain('Zx81');
    expect(id).not.toContain('4711');
    expect(id).not.toBe(sealer.sessionHash('key_Zx81QpLm', 'order-4711'));
  });
});
