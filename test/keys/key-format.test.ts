import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  generateKey,
  hashKey,
  isWellFormedKey,
  KEY_LENGTH,
  KEY_PREFIX,
} from '../../src/keys/key-format.js';
import { newKeyId } from '../../src/keys/key-service.js';

describe('key format', () => {
  it('is plauder_ + 38 base62 characters, within the contract’s alphabet and length', () => {
    const keys = Array.from({ length: 200 }, generateKey);
    for (const key of keys) {
      expect(key).toMatch(/^plauder_[A-Za-z0-9]{38}$/);
      expect(key.length).toBe(KEY_LENGTH);
      expect(key.length).toBeLessThanOrEqual(100);
      expect(isWellFormedKey(key)).toBe(true);
    }
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('refuses every single-character typo through the checksum', () => {
    const key = generateKey();
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    let refused = 0;
    for (let i = KEY_PREFIX.length; i < key.length; i++) {
      for (const c of alphabet) {
        if (c === key[i]) continue;
        const typo = key.slice(0, i) + c + key.slice(i + 1);
        expect(isWellFormedKey(typo)).toBe(false);
        refused++;
      }
    }
    expect(refused).toBe(38 * 61);
  });

  it('refuses swapped neighbours, wrong prefixes, truncation and padding', () => {
    const key = generateKey();
    const i = 20;
    const swapped = key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
    if (swapped !== key) expect(isWellFormedKey(swapped)).toBe(false);
    expect(isWellFormedKey(`x${key.slice(1)}`)).toBe(false);
    expect(isWellFormedKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedKey(`${key}0`)).toBe(false);
    expect(isWellFormedKey(` ${key}`)).toBe(false);
  });

  it('accepts no random string as a key', () => {
    fc.assert(fc.property(fc.string({ maxLength: 60 }), (s) => !isWellFormedKey(s)));
    fc.assert(
      fc.property(fc.stringMatching(/^plauder_[A-Za-z0-9]{38}$/), (s) => {
        // A random candidate passes the checksum with probability ≈ 1/56.8e9.
        expect(isWellFormedKey(s)).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });

  it('hashes with SHA-256 hex, as every release stored keys', () => {
    expect(hashKey('plauder_x')).toMatch(/^[0-9a-f]{64}$/);
    // FIPS 180-2's test vector: keys stored by earlier releases still match.
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const key = generateKey();
    expect(hashKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
  });
});

describe('key ids', () => {
  it('skip the bytes that would bias base36 (252-255) and use every other byte', () => {
    // 252..255 would map to 0..3 a second time; they are drawn again instead.
    const bytes = [
      252, 253, 254, 255, 0, 35, 36, 251, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    ];
    let offset = 0;
    const id = newKeyId((size) => {
      const chunk = Buffer.from(bytes.slice(offset, offset + size));
      offset += size;
      return chunk.length === size
        ? chunk
        : Buffer.concat([chunk, Buffer.alloc(size - chunk.length, 1)]);
    });
    expect(id).toBe('key_0z0zabcdefghijkl');
  });

  it('are uniform over base36: every character about equally often', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) {
      for (const char of newKeyId().slice(4)) counts.set(char, (counts.get(char) ?? 0) + 1);
    }
    expect(counts.size).toBe(36);
    const expected = (4000 * 16) / 36;
    // Chi-square with 35 degrees of freedom; 66.6 is its 0.999 quantile. With `byte % 36`
    // the four favoured characters alone add about 110.
    const chiSquare = [...counts.values()].reduce(
      (sum, n) => sum + (n - expected) ** 2 / expected,
      0,
    );
    expect(chiSquare).toBeLessThan(66.6);
  });
});
