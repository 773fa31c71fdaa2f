/**
 * The sealer: a sealed value opens to what was sealed, as its bytes or their base64url text,
 * and not when changed or under another binding or secret. A session's names are the same
 * whether the sealer remembered them or not.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createTurnSealer, REMEMBERED_SESSIONS } from '../../src/sessions/turn-sealer.js';

const sealer = createTurnSealer(randomBytes(32));

const WINDOW = [
  ['Grüß dich, wie heißt du?', 'Ich bin plauder. 👋', 'de', 1_700_000_000_000],
  ['Quotes " and \\ backslashes\nand a newline', 'fine', 'en', 1_700_000_000_001],
  ['', 'empty message', 'de', 0],
];

describe('sealing JSON', () => {
  it('opens to the value sealed, whatever its strings hold', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text, fc.nat()), { maxLength: 25 }), (value) => {
        expect(sealer.openJson(sealer.sealJson(value, 'b'), 'b')).toEqual(value);
      }),
    );
  });

  it('draws a new IV for every seal', () => {
    const first = sealer.sealJson(WINDOW, 'binding');
    const second = sealer.sealJson(WINDOW, 'binding');
    expect(first.length).toBe(second.length);
    expect(first.subarray(0, 12).equals(second.subarray(0, 12))).toBe(false);
  });

  it('opens the sealed bytes however they are held: as base64url text or a view into a larger buffer', () => {
    const sealed = sealer.sealJson(WINDOW, 'binding');
    expect(sealer.openJson(sealed.toString('base64url'), 'binding')).toEqual(WINDOW);
    const larger = Buffer.concat([Buffer.from('before'), sealed, Buffer.from('after')]);
    const view = new Uint8Array(larger.buffer, larger.byteOffset + 6, sealed.length);
    expect(sealer.openJson(view, 'binding')).toEqual(WINDOW);
  });

  it('does not open a changed byte, nor under another binding or another secret', () => {
    const sealed = sealer.sealJson(WINDOW, 'binding');
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
