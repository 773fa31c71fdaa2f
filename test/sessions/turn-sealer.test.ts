/**
 * The sealer's array form: a window sealed from its turns encoded one by one (as a session
 * keeps them between turns) is the same sealed JSON as the window sealed whole, so either
 * opens the other's rows.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTurnSealer } from '../../src/sessions/turn-sealer.js';

const sealer = createTurnSealer(randomBytes(32));
const encode = (value: unknown) => Buffer.from(JSON.stringify(value));

const WINDOW = [
  ['Grüß dich, wie heißt du?', 'Ich bin plauder. 👋', 'de', 1_700_000_000_000],
  ['Quotes " and \\ backslashes\nand a newline', 'fine', 'en', 1_700_000_000_001],
  ['', 'empty message', 'de', 0],
];

describe('sealing a JSON array from its encoded elements', () => {
  it('opens to the same array as sealing the array whole', () => {
    const sealed = sealer.sealJsonArray(WINDOW.map(encode), 'binding');
    expect(sealer.openJson(sealed, 'binding')).toEqual(WINDOW);
  });

  it('seals exactly the bytes of the whole array: same length, different IV', () => {
    const fromElements = sealer.sealJsonArray(WINDOW.map(encode), 'binding');
    const whole = sealer.sealJson(WINDOW, 'binding');
    expect(fromElements.length).toBe(whole.length);
    expect(fromElements).not.toBe(whole);
  });

  it('seals no elements as an empty array, and one without a separator', () => {
    expect(sealer.openJson(sealer.sealJsonArray([], 'b'), 'b')).toEqual([]);
    expect(sealer.openJson(sealer.sealJsonArray([encode(WINDOW[0])], 'b'), 'b')).toEqual([
      WINDOW[0],
    ]);
  });

  it('does not open under another binding or another secret', () => {
    const sealed = sealer.sealJsonArray(WINDOW.map(encode), 'binding');
    expect(sealer.openJson(sealed, 'other binding')).toBeUndefined();
    expect(createTurnSealer(randomBytes(32)).openJson(sealed, 'binding')).toBeUndefined();
  });
});
