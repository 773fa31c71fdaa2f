import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createBuiltinCore } from '../../../src/core/builtin/create-builtin-core.js';
import { CoreError, type Language, type Turn } from '../../../src/core/core-adapter.js';

const core = createBuiltinCore();
const signal = new AbortController().signal;

const language = fc.constantFrom<Language>('de', 'en');
// Words the core knows mixed with noise, so generated messages reach every code path.
const word = fc.oneof(
  fc.constantFrom(
    'Anfragen',
    'limit',
    'Plus-Plan',
    'Schlüssel',
    'session',
    'und',
    'ich heiße',
    'my name is',
    'hallo',
    'thanks',
    '429',
    'Anfragelimit',
    'rotaet',
    'wie lange',
    'what about',
  ),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
);
const message = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 200 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }),
  fc.array(word, { minLength: 1, maxLength: 12 }).map((words) => words.join(' ')),
);
const turn: fc.Arbitrary<Turn> = fc.record({
  message,
  reply: fc.string({ maxLength: 80 }),
  language,
});

describe('built-in core properties', () => {
  it('always replies with a non-empty string and never throws', async () => {
    await fc.assert(
      fc.asyncProperty(
        language,
        message,
        fc.array(turn, { maxLength: 20 }),
        async (lang, text, history) => {
          const reply = await core.reply({ language: lang, message: text, history, signal });
          expect(typeof reply).toBe('string');
          expect(reply.trim().length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is deterministic: the same request gets the same reply', async () => {
    await fc.assert(
      fc.asyncProperty(
        language,
        message,
        fc.array(turn, { maxLength: 5 }),
        async (lang, text, history) => {
          const first = await core.reply({ language: lang, message: text, history, signal });
          const second = await core.reply({ language: lang, message: text, history, signal });
          expect(second).toBe(first);
        },
      ),
      { numRuns: 200 },
    );
  });

  // How fast: `npm run bench:core` (the "maximum length" row), not a timed test.
  it('answers a message of the maximum length', async () => {
    const long = 'Wie viele Anfragen habe ich im Monat und was passiert am Limit? '
      .repeat(64)
      .slice(0, 4000);
    const reply = await core.reply({ language: 'de', message: long, history: [], signal });
    expect(reply).toMatch(/1000|5000|Anfragen/);
  });

  it('refuses an already aborted request with a CoreError', async () => {
    const aborted = AbortSignal.abort();
    await expect(
      core.reply({ language: 'en', message: 'hello', history: [], signal: aborted }),
    ).rejects.toBeInstanceOf(CoreError);
  });
});
