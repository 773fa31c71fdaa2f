import { describe, expect } from 'vitest';
import type { CoreNotice } from '../../../src/core/core-adapter.js';
import { DEFAULT_FALLBACKS } from '../../../src/core/rasa/rasa-config.js';
import { ask } from './rasa-bot-process.js';
import { test } from './rasa-test.js';

describe('rasa core: the reply it makes of the answer', () => {
  test('joins the texts of all messages with blank lines, in order, trimmed', async ({
    rasaBot,
    openCore,
  }) => {
    await rasaBot.script({
      messages: [{ text: ' Hallo! ' }, { text: 'Ich bin der Shop-Bot.\nWas suchst du?' }],
    });
    await expect(openCore().reply(ask('Hi'))).resolves.toBe(
      'Hallo!\n\nIch bin der Shop-Bot.\nWas suchst du?',
    );
  });

  test('lists the titles of buttons under the text of their message', async ({
    rasaBot,
    openCore,
  }) => {
    await rasaBot.script({
      messages: [
        {
          text: 'What would you like to do?',
          buttons: [
            { title: 'Track my order', payload: '/track' },
            { title: 'Talk to a human', payload: '/handoff' },
          ],
        },
      ],
    });
    await expect(openCore().reply(ask('menu', { language: 'en' }))).resolves.toBe(
      'What would you like to do?\n- Track my order\n- Talk to a human',
    );
  });

  test('describes images and attachments with their URL, in the endpoint language', async ({
    rasaBot,
    openCore,
  }) => {
    const messages = [
      { text: 'Here it is:', image: 'https://shop.example/p/42.png' },
      { attachment: 'https://shop.example/invoice.pdf' },
      { attachment: { type: 'video', payload: {} } },
    ];
    await rasaBot.script({ messages }, { messages });
    const core = openCore();
    await expect(core.reply(ask('show', { language: 'en' }))).resolves.toBe(
      'Here it is:\n[Image: https://shop.example/p/42.png]\n\n' +
        '[Attachment: https://shop.example/invoice.pdf]\n\n[Attachment]',
    );
    await expect(core.reply(ask('zeig', { language: 'de' }))).resolves.toBe(
      'Here it is:\n[Bild: https://shop.example/p/42.png]\n\n' +
        '[Anhang: https://shop.example/invoice.pdf]\n\n[Anhang]',
    );
  });

  test('shows buttons alone and leaves out custom payloads and blank texts', async ({
    rasaBot,
    openCore,
  }) => {
    await rasaBot.script({
      messages: [
        { custom: { widget: 'map' } },
        { text: '   ' },
        { buttons: [{ title: 'Ja' }, { title: ' ' }, { payload: '/nein' }, { title: 'Nein' }] },
      ],
    });
    await expect(openCore().reply(ask('?'))).resolves.toBe('- Ja\n- Nein');
  });
});

describe('rasa core: an answer with nothing to show', () => {
  test.for([
    ['de', DEFAULT_FALLBACKS.de],
    ['en', DEFAULT_FALLBACKS.en],
  ] as const)(
    'replies the polite fallback in %s to [] and reports it',
    async ([language, text], { rasaBot, openCore }) => {
      await rasaBot.script({ messages: [] });
      const notices: CoreNotice[] = [];
      const reply = await openCore().reply(
        ask('geheime Nachricht', { language, onNotice: (n) => notices.push(n) }),
      );

      expect(reply).toBe(text);
      expect(notices).toEqual([{ kind: 'empty_answer', core: 'rasa', language, messages: 0 }]);
      expect(JSON.stringify(notices)).not.toContain('geheime');
    },
  );

  test('falls back too when no message has anything to show, and counts them', async ({
    rasaBot,
    openCore,
  }) => {
    await rasaBot.script({ messages: [{ custom: { a: 1 } }, { text: '' }] });
    const notices: CoreNotice[] = [];
    const reply = await openCore().reply(ask('x', { onNotice: (n) => notices.push(n) }));
    expect(reply).toBe(DEFAULT_FALLBACKS.de);
    expect(notices).toEqual([{ kind: 'empty_answer', core: 'rasa', language: 'de', messages: 2 }]);
  });

  test('uses the configured fallbacks and needs no onNotice', async ({ rasaBot, openCore }) => {
    await rasaBot.script({ messages: [] }, { messages: [] });
    const core = openCore({ fallbacks: { de: 'Wie bitte?', en: 'Pardon?' } });
    await expect(core.reply(ask('x'))).resolves.toBe('Wie bitte?');
    await expect(core.reply(ask('x', { language: 'en' }))).resolves.toBe('Pardon?');
  });

  test('reports nothing when the answer has text', async ({ openCore }) => {
    const notices: CoreNotice[] = [];
    await openCore().reply(ask('x', { onNotice: (n) => notices.push(n) }));
    expect(notices).toEqual([]);
  });
});

describe('rasa core: an answer it cannot read', () => {
  const garbage = [
    ['not JSON (an HTML page with 200)', { raw: '<html><body>Oops</body></html>' }],
    ['malformed JSON', { raw: '[{"text": "x"', contentType: 'application/json' }],
    ['an object instead of an array', { body: { text: 'hallo' } }],
    ['an array of strings', { body: ['hallo'] }],
    ['a numeric text', { messages: [{ text: 42 }] }],
    ['an image that is not a URL string', { messages: [{ image: { src: 'x' } }] }],
    ['buttons that are not an array', { messages: [{ text: 'a', buttons: 'Ja' }] }],
    ['a button title that is not a string', { messages: [{ buttons: [{ title: 1 }] }] }],
  ] as const;

  test.for(garbage)(
    'fails with core_unavailable, not retried, on %s',
    async ([_label, step], { rasaBot, openCore }) => {
      await rasaBot.script(step, { messages: [{ text: 'should not be reached' }] });
      const error = await openCore({ maxRetries: 3 })
        .reply(ask('Hallo'))
        .catch((reason: unknown) => reason);
      expect(error).toMatchObject({ name: 'CoreError', code: 'core_unavailable' });
      expect((error as Error).message).toMatch(/^rasa core: unusable reply with HTTP 200: /);
      expect((await rasaBot.requests()).length).toBe(1);
    },
  );
});
