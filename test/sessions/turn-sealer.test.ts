/**
 * The sealer's array form: a window sealed from its turns encoded one by one (as a session
 * keeps them between turns) is the same sealed JSON as the window sealed whole, so either
 * opens the other's rows; the sealed bytes open as they are or as their base64url text.
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
    expect(fromElements.subarray(0, 12).equals(whole.subarray(0, 12))).toBe(false);
  });

  it('seals no elements as an empty array, and one without a separator', () => {
    expect(sealer.openJson(sealer.sealJsonArray([], 'b'), 'b')).toEqual([]);
    expect(sealer.openJson(sealer.sealJsonArray([encode(WINDOW[0])], 'b'), 'b')).toEqual([
      WINDOW[0],
    ]);
  });

  it('opens the sealed bytes however they are held: as base64url text or a view into a larger buffer', () => {
    const sealed = sealer.sealJsonArray(WINDOW.map(encode), 'binding');
    expect(sealer.openJson(sealed.toString('base64url'), 'binding')).toEqual(WINDOW);
    const larger = Buffer.concat([Buffer.from('before'), sealed, Buffer.from('after')]);
    const view = new Uint8Array(larger.buffer, larger.byteOffset + 6, sealed.length);
    expect(sealer.openJson(view, 'binding')).toEqual(WINDOW);
  });

  it('does not open a changed byte, nor under another binding or another secret', () => {
    const sealed = sealer.sealJsonArray(WINDOW.map(encode), 'binding');
    expect(sealer.openJson(sealed, 'other binding')).toBeUndefined();
    expect(createTurnSealer(randomBytes(32)).openJson(sealed, 'binding')).toBeUndefined();
    for (const at of [0, 20, sealed.length - 1]) {
      const changed = Buffer.from(sealed);
      changed[at] = (changed[at] ?? 0) ^ 1;
      expect(sealer.openJson(changed, 'binding')).toBeUndefined();
    }
  });
});
