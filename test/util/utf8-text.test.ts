/**
 * Decoding UTF-8 through ICU gives exactly what `Buffer#toString` gives: for ASCII, Latin-1,
 * other scripts, emoji (surrogate pairs), short and long text.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { utf8Text } from '../../src/util/utf8-text.js';

describe('utf8Text', () => {
  it('decodes any well-formed text exactly as Buffer#toString does', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 2000 });
    fc.assert(
      fc.property(text, (value) => {
        const bytes = Buffer.from(value);
        expect(utf8Text(bytes)).toBe(bytes.toString('utf8'));
        expect(utf8Text(bytes)).toBe(value);
      }),
    );
  });

  it('decodes long windows of German, Greek, Chinese and emoji text, and pure ASCII', () => {
    for (const sample of [
      'Grüß dich, schön! ',
      'Καλημέρα ',
      '你好，世界。',
      '👋🏽 ',
      'plain ascii ',
    ]) {
      const value = JSON.stringify([sample.repeat(400), 'x']);
      expect(utf8Text(Buffer.from(value))).toBe(value);
    }
    expect(utf8Text(Buffer.alloc(0))).toBe('');
  });
});
