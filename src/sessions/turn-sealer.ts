/**
 * @module sessions/turn-sealer
 * Session turns are encrypted at rest (AES-256-GCM) so that neither the database file nor
 * its WAL holds message text. The additional data binds a sealed turn to its key id,
 * session and position: a row copied under another key or session does not open.
 * Session ids are stored as HMACs for the same reason.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';
import { utf8Text } from '../util/utf8-text.js';

const IV_BYTES = 12;
const ARRAY_OPEN = 0x5b;
const ARRAY_COMMA = 0x2c;
const ARRAY_CLOSE = 0x5d;
const TAG_BYTES = 16;
/**
 * Sessions whose two names (`sessionHash`, `conversationId`) are remembered, because every
 * turn with a sessionId needs both HMACs; the oldest is forgotten first, which bounds the memory.
 */
export const REMEMBERED_SESSIONS = 16_384;

export interface TurnSealer {
  /** Stable, keyed hash of a sessionId within one key. */
  sessionHash(keyId: string, sessionId: string): string;
  /**
   * Stable, keyed hash of other values that must be recognised but not stored in clear
   * (an idempotency key, a request body), within a purpose that keeps them apart.
   */
  digest(purpose: string, ...parts: ReadonlyArray<string | Uint8Array>): string;
  /**
   * Another stable, keyed hash of a sessionId within one key, under a key of its own: the name
   * of the conversation handed to the core, which may pass it to another system (a bot's
   * `sender`). A separate key keeps it from matching the session's database row.
   */
  conversationId(keyId: string, sessionId: string): string;
  /** Seals any JSON value, bound to `binding`: IV, ciphertext and tag. */
  sealJson(value: unknown, binding: string): Buffer;
  /**
   * Seals JSON given as its UTF-8 bytes (e.g. a JSON array made by `jsonArrayBytes` from
   * elements a caller kept encoded), which the caller vouches for: the same as `sealJson` of
   * their value, without encoding it again.
   */
  sealJsonBytes(json: Uint8Array, binding: string): Buffer;
  /**
   * Opens what `sealJson` sealed, given as its bytes or their base64url text. Undefined when
   * the data was tampered with or sealed under another secret or binding.
   */
  openJson(sealed: string | Uint8Array, binding: string): unknown;
  /** `openJson`, with the JSON's bytes as they were sealed (for `jsonArrayBytes` to reuse). */
  openJsonBytes(
    sealed: string | Uint8Array,
    binding: string,
  ): { readonly value: unknown; readonly bytes: Buffer } | undefined;
}

export function createTurnSealer(secret: Buffer): TurnSealer {
  const encryptionKey = derive(secret, 'plauder turn encryption v1');
  const hashKey = derive(secret, 'plauder session id v1');
  const conversationKey = derive(secret, 'plauder core conversation id v1');

  const hmac = (key: KeyObject, text: string) =>
    createHmac('sha256', key).update(text).digest('base64url');
  const remembered = new Map<string, SessionNames>();
  const namesOf = (keyId: string, sessionId: string): SessionNames => {
    const id = `${keyId}\0${sessionId}`;
    let names = remembered.get(id);
    if (names === undefined) {
      if (remembered.size >= REMEMBERED_SESSIONS) {
        const oldest = remembered.keys().next();
        if (!oldest.done) remembered.delete(oldest.value);
      }
      names = { id, hash: hmac(hashKey, id), conversation: undefined };
      remembered.set(id, names);
    }
    return names;
  };

  const nextIv = createIvSource();
  const seal = (plain: string | Uint8Array, binding: string) => {
    const iv = nextIv();
    const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv);
    cipher.setAAD(Buffer.from(binding));
    const body = typeof plain === 'string' ? cipher.update(plain, 'utf8') : cipher.update(plain);
    // GCM is a stream mode: `final()` adds nothing, it only computes the tag.
    cipher.final();
    return Buffer.concat([iv, body, cipher.getAuthTag()]);
  };
  const sealJson = (value: unknown, binding: string) => seal(JSON.stringify(value), binding);
  /** The sealed JSON's bytes and its value; undefined unless it opens and parses. */
  const openJsonBytes = (sealed: string | Uint8Array, binding: string) => {
    try {
      const raw =
        typeof sealed === 'string'
          ? Buffer.from(sealed, 'base64url')
          : Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
      const iv = raw.subarray(0, IV_BYTES);
      const tag = raw.subarray(raw.length - TAG_BYTES);
      const decipher = createDecipheriv('aes-256-gcm', encryptionKey, iv);
      decipher.setAAD(Buffer.from(binding));
      decipher.setAuthTag(tag);
      const bytes = decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES));
      // Throws unless the tag matches: nothing is returned from a tampered value. GCM is a
      // stream mode: `final()` returns nothing more.
      decipher.final();
      return { value: JSON.parse(utf8Text(bytes)) as unknown, bytes };
    } catch {
      return undefined;
    }
  };
  const openJson = (sealed: string | Uint8Array, binding: string): unknown =>
    openJsonBytes(sealed, binding)?.value;

  return {
    sessionHash(keyId, sessionId) {
      return namesOf(keyId, sessionId).hash;
    },
    digest(purpose, ...parts) {
      const hmac = createHmac('sha256', hashKey).update(purpose);
      // Length-prefixed, so that no two different lists of parts hash alike.
      for (const part of parts) hmac.update(`\0${Buffer.byteLength(part)}:`).update(part);
      return hmac.digest('base64url');
    },
    conversationId(keyId, sessionId) {
      const names = namesOf(keyId, sessionId);
      names.conversation ??= hmac(conversationKey, names.id);
      return names.conversation;
    },
    sealJson,
    sealJsonBytes: seal,
    openJson,
    openJsonBytes,
  };
}

/**
 * The JSON array whose elements are `elements` (each one JSON value, UTF-8 encoded, or
 * several with their commas), as one buffer of its own: not a slice of Node's shared pool,
 * so that a window kept in memory holds only its own bytes.
 */
export function jsonArrayBytes(elements: readonly Uint8Array[]): Buffer {
  let length = 2 + Math.max(0, elements.length - 1);
  for (const element of elements) length += element.length;
  const bytes = Buffer.allocUnsafeSlow(length);
  bytes[0] = ARRAY_OPEN;
  let at = 1;
  for (const element of elements) {
    if (at > 1) bytes[at++] = ARRAY_COMMA;
    bytes.set(element, at);
    at += element.length;
  }
  bytes[at] = ARRAY_CLOSE;
  return bytes;
}

/**
 * Where the elements after the first `count` of a JSON array's bytes begin: just past the
 * comma that ends the `count`-th element (1, just past the `[`, for none). -1 when the
 * array has no more than `count` elements or the bytes are no JSON array. Only the bytes of
 * those elements are read; UTF-8's multi-byte sequences never hold an ASCII byte.
 */
export function afterElements(bytes: Uint8Array, count: number): number {
  if (bytes[0] !== 0x5b) return -1;
  if (count === 0) return 1;
  let depth = 0;
  let inString = false;
  let seen = 0;
  for (let i = 1; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === 0x5c) i++;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x5b || byte === 0x7b) depth++;
    else if (byte === 0x5d || byte === 0x7d) {
      // The array's own end, before `count` elements.
      if (depth === 0) return -1;
      depth--;
    } else if (byte === 0x2c && depth === 0 && ++seen === count) return i + 1;
  }
  return -1;
}

/** A session's names, as the sealer remembers them. */
interface SessionNames {
  /** `${keyId}\0${sessionId}`: what both HMACs are of. */
  readonly id: string;
  readonly hash: string;
  /** Made when the session's turn first asks for it. */
  conversation: string | undefined;
}

/**
 * Random 96-bit IVs, drawn from the CSPRNG in batches: one `randomBytes` call per 256 IVs
 * instead of one per seal (each call costs more than encrypting a short window).
 */
function createIvSource(): () => Buffer {
  const BATCH = 256;
  let pool = Buffer.alloc(0);
  let offset = 0;
  return () => {
    if (offset + IV_BYTES > pool.length) {
      pool = randomBytes(IV_BYTES * BATCH);
      offset = 0;
    }
    const iv = pool.subarray(offset, offset + IV_BYTES);
    offset += IV_BYTES;
    return iv;
  };
}

/** A KeyObject, so the key is imported once rather than on every cipher. */
function derive(secret: Buffer, info: string): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info, 32)));
}
