/**
 * The English dictionary (package `dictionary-en`) tells a short typo from a real word, so
 * "kye" is read as `key` while "bye" stays a word of its own; German text is left to the
 * knowledge base's own typo search.
 */
import { describe, expect, it } from 'vitest';
import { createBuiltinCore } from '../../../src/core/builtin/create-builtin-core.js';
import { ENGLISH_STEM_COUNT, isEnglishWord } from '../../../src/core/builtin/text/english-words.js';

const signal = new AbortController().signal;

describe('English words from the Hunspell dictionary', () => {
  it('holds the dictionary stems only, a bounded set', () => {
    expect(ENGLISH_STEM_COUNT).toBeGreaterThan(40_000);
    expect(ENGLISH_STEM_COUNT).toBeLessThan(60_000);
  });

  it.each(['key', 'bye', 'eye', 'plans', 'tried', 'making', 'stopped', 'rotate', 'limit'])(
    '%s is a word',
    (word) => expect(isEnglishWord(word)).toBe(true),
  );

  it.each(['kye', 'limt', 'rotaet', 'sesion', 'kee'])('%s is none', (word) =>
    expect(isEnglishWord(word)).toBe(false),
  );

  it('reads a short typo in an English question as the word it misspells', async () => {
    const core = createBuiltinCore();
    const ask = (message: string) => core.reply({ language: 'en', message, history: [], signal });
    expect(await ask('how do i rotaet my api kye')).toMatch(/keys rotate/);
    expect(await ask('what is the limt for plus')).toMatch(/\b5000\b/);
    // Real words are not typos: a bike is no key.
    expect(await ask('Keys for my bike and my car?')).toMatch(/don't know/);
  });

  it('corrects a short word only where the dictionary knows it is none, in English text', () => {
    const core = createBuiltinCore();
    const key = core.index().forms.get('key');
    const concepts = (language: 'de' | 'en', message: string) =>
      core
        .explain(language, message, [])
        .analysis?.clauses.flatMap((clause) => clause.reading.own.flatMap((u) => u.concepts));
    expect(concepts('en', 'where is my kye')).toContain(key);
    expect(concepts('en', 'where is my eye')).not.toContain(key);
    // German text has no dictionary here: "kye" stays unknown.
    expect(concepts('de', 'wo ist mein kye')).not.toContain(key);
  });
});
