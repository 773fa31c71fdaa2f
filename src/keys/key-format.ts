/**
 * @module keys/key-format
 * API key format: `plauder_` + 32 random base62 characters (≈190 bits) + a 6-character
 * base62 CRC32 of the random part. The checksum lets the service refuse a mistyped key
 * without a database lookup and lets secret scanners recognise leaked keys.
 */
import { hash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

export const KEY_PREFIX = 'plauder_';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);
/** Characters of the key kept for display (`plauder_Ab3x`): enough to tell keys apart. */
const DISPLAY_LENGTH = KEY_PREFIX.length + 4;

export const KEY_LENGTH = KEY_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH;

export function generateKey(): string {
  const random = randomBase62(RANDOM_LENGTH);
  return `${KEY_PREFIX}${random}${checksum(random)}`;
}

/** True when `key` has the format and a matching checksum. No I/O. */
export function isWellFormedKey(key: string): boolean {
  if (key.length !== KEY_LENGTH || !KEY_PATTERN.test(key)) return false;
  const random = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + RANDOM_LENGTH);
  return key.slice(KEY_PREFIX.length + RANDOM_LENGTH) === checksum(random);
}

/**
 * SHA-256 (hex) of the whole key: the only form in which a key is stored. The one-shot
 * `hash` makes no Hash object, which is cheaper on every request.
 */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_LENGTH);
}

function checksum(random: string): string {
  let value = crc32(random) >>> 0;
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = ALPHABET[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

/** Unbiased base62: bytes ≥ 248 (= 4 × 62) are rejected. */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}
