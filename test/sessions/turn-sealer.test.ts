/**
 * The sealer's array form: a window sealed from its turns' encoded bytes (as a session
 * keeps them between turns) is the same sealed JSON as the window sealed whole, so either
 * opens the other's rows; the sealed bytes open as they are or as their base64url text.
 * A session's names are the same whether the sealer remembered them or not. A window's
 * remaining turns are cut from its bytes exactly, whatever its strings hold.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  afterElements,
  createTurnSealer,
  jsonArrayBytes,
  REMEMBERED_SESSIONS,
} from '../../src/sessions/turn-sealer.js';

const sealer = createTurnSealer(randomBytes(32));
const encode = (value: unknown) => Buffer.from(JSON.stringify(value));
/** A JSON array sealed from its encoded elements, as a session's window is. */
const sealArray = (elements: readonly Buffer[], binding: string) =>
  sealer.sealJsonBytes(jsonArrayBytes(elements), binding);

const WINDOW = [
  ['Grüß dich, wie heißt du?', 'Ich bin plauder. 👋', 'de', 1_700_000_000_000],
  ['Quotes " and \\ backslashes\nand a newline', 'fine', 'en', 1_700_000_000_001],
  ['', 'empty message', 'de', 0],
];

describe('sealing a JSON array from its encoded elements', () => {
  it('opens to the same array as sealing the array whole', () => {
    const sealed = sealArray(WINDOW.map(encode), 'binding');
    expect(sealer.openJson(sealed, 'binding')).toEqual(WINDOW);
  });

  it('seals exactly the bytes of the whole array: same length, different IV', () => {
    const fromElements = sealArray(WINDOW.map(encode), 'binding');
    const whole = sealer.sealJson(WINDOW, 'binding');
    expect(fromElements.length).toBe(whole.length);
    expect(fromElements.subarray(0, 12).equals(whole.subarray(0, 12))).toBe(false);
  });

  it('seals no elements as an empty array, and one without a separator', () => {
    expect(sealer.openJson(sealArray([], 'b'), 'b')).toEqual([]);
    expect(sealer.openJson(sealArray([encode(WINDOW[0])], 'b'), 'b')).toEqual([WINDOW[0]]);
  });

  it('opens the sealed bytes however they are held: as base64url text or a view into a larger buffer', () => {
    const sealed = sealArray(WINDOW.map(encode), 'binding');
    expect(sealer.openJson(sealed.toString('base64url'), 'binding')).toEqual(WINDOW);
    const larger = Buffer.concat([Buffer.from('before'), sealed, Buffer.from('after')]);
    const view = new Uint8Array(larger.buffer, larger.byteOffset + 6, sealed.length);
    expect(sealer.openJson(view, 'binding')).toEqual(WINDOW);
  });

  it('does not open a changed byte, nor under another binding or another secret', () => {
    const sealed = sealArray(WINDOW.map(encode), 'binding');
    expect(sealer.openJson(sealed, 'other binding')).toBeUndefined();
    expect(createTurnSealer(randomBytes(32)).openJson(sealed, 'binding')).toBeUndefined();
    for (const at of [0, 20, sealed.length - 1]) {
      const changed = Buffer.from(sealed);
      changed[at] = (changed[at] ?? 0) ^ 1;
      expect(sealer.openJson(changed, 'binding')).toBeUndefined();
    }
  });
});

describe("a session's names", () => {
  it('are the same remembered, forgotten and made again, and in another process with the same secret', () => {
    const secret = randomBytes(32);
    const first = createTurnSealer(secret);
    const hash = first.sessionHash('key_a', 'chat-1');
    const conversation = first.conversationId('key_a', 'chat-1');
    expect(first.sessionHash('key_a', 'chat-1')).toBe(hash);
    expect(first.conversationId('key_a', 'chat-1')).toBe(conversation);
    // More sessions than the sealer remembers: the first is forgotten and made again.
    for (let i = 0; i < REMEMBERED_SESSIONS; i++) first.sessionHash('key_b', `other-${i}`);
    expect(first.conversationId('key_a', 'chat-1')).toBe(conversation);
    expect(first.sessionHash('key_a', 'chat-1')).toBe(hash);

    const fresh = createTurnSealer(secret);
    expect(fresh.conversationId('key_a', 'chat-1')).toBe(conversation);
    expect(fresh.sessionHash('key_a', 'chat-1')).toBe(hash);
  });

  it('differ between the two names, between keys, between sessions and between secrets', () => {
    const names = [
      sealer.sessionHash('key_a', 'chat-1'),
      sealer.conversationId('key_a', 'chat-1'),
      sealer.sessionHash('key_b', 'chat-1'),
      sealer.sessionHash('key_a', 'chat-2'),
      createTurnSealer(randomBytes(32)).sessionHash('key_a', 'chat-1'),
    ];
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('the elements after the first n of a JSON array, found in its bytes', () => {
  const text = fc.string({ unit: 'binary', maxLength: 40 });
  const entry = fc.tuple(text, text, fc.constantFrom('de', 'en'), fc.nat());
  // Brackets, braces, commas, quotes and backslashes inside the strings, and emoji.
  const tricky = fc.constantFrom('[', ']', '{', '}', ',', '"', '\\', '\\"', '"],["', '👋', 'ß');
  const window = fc.array(fc.oneof(entry, fc.tuple(tricky, tricky, fc.constant('de'), fc.nat())), {
    maxLength: 25,
  });

  it('leave exactly the remaining elements, whatever the strings hold', () => {
    fc.assert(
      fc.property(window, (entries) => {
        const bytes = Buffer.from(JSON.stringify(entries));
        for (let n = 0; n < entries.length; n++) {
          const start = afterElements(bytes, n);
          const rest = bytes.subarray(start, bytes.length - 1).toString();
          expect(JSON.parse(`[${rest}]`)).toEqual(entries.slice(n));
        }
        // No element is left after the last.
        if (entries.length > 0) expect(afterElements(bytes, entries.length)).toBe(-1);
      }),
    );
  });

  it('find nothing in bytes that are no JSON array', () => {
    expect(afterElements(Buffer.from('{"a":[1,2]}'), 1)).toBe(-1);
    expect(afterElements(Buffer.from(''), 0)).toBe(-1);
    expect(afterElements(Buffer.from('[]'), 1)).toBe(-1);
    expect(afterElements(Buffer.from('[[1],[2]'), 2)).toBe(-1);
  });
});

describe('a JSON array made from its encoded elements', () => {
  const text = fc.string({ unit: 'binary', maxLength: 40 });
  const tricky = fc.constantFrom('[', ']', ',', '"', '\\', '"],["', '👋', 'ß');
  const element = fc.oneof(fc.tuple(text, text, fc.nat()), fc.tuple(tricky, fc.nat()), text);

  it('is the bytes of the array encoded whole, for any elements, and seals and opens as it', () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 25 }), (elements) => {
        const bytes = jsonArrayBytes(elements.map(encode));
        expect(bytes.equals(Buffer.from(JSON.stringify(elements)))).toBe(true);
        expect(sealer.openJson(sealer.sealJsonBytes(bytes, 'b'), 'b')).toEqual(elements);
      }),
    );
  });

  it('takes pieces of several elements with their commas, as a window cut from its bytes is', () => {
    const kept = Buffer.from(JSON.stringify(WINDOW)).subarray(1, -1);
    const bytes = jsonArrayBytes([kept, encode(['neu', 'new', 'de', 1])]);
    expect(JSON.parse(bytes.toString())).toEqual([...WINDOW, ['neu', 'new', 'de', 1]]);
  });

  it("is a buffer of its own, not a slice of Node's shared pool that it would keep alive", () => {
    const small = jsonArrayBytes([encode('a')]);
    expect(small.byteOffset).toBe(0);
    expect(small.buffer.byteLength).toBe(small.length);
    expect(Buffer.from('x').buffer.byteLength).toBeGreaterThan(1); // the pool, for contrast
  });
});
