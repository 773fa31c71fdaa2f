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
   * `sealJson` of a value given as its JSON's UTF-8 bytes, which the caller vouches for
   * (a window kept encoded turn by turn need not be encoded again whole).
   */
  sealJsonBytes(json: Uint8Array, binding: string): Buffer;
  /**
   * Opens what `sealJson` sealed, given as its bytes or their base64url text. Undefined when
   * the data was tampered with or sealed under another secret or binding.
   */
  openJson(sealed: string | Uint8Array, binding: string): unknown;
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
  const sealJsonBytes = (json: Uint8Array, binding: string) => {
    const iv = nextIv();
    const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv);
    cipher.setAAD(Buffer.from(binding));
    const body = cipher.update(json);
    // GCM is a stream mode: `final()` adds nothing, it only computes the tag.
    cipher.final();
    return Buffer.concat([iv, body, cipher.getAuthTag()]);
  };
  const sealJson = (value: unknown, binding: string) =>
    sealJsonBytes(Buffer.from(JSON.stringify(value)), binding);
  const openJson = (sealed: string | Uint8Array, binding: string): unknown => {
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
      return JSON.parse(utf8Text(bytes)) as unknown;
    } catch {
      return undefined;
    }
  };

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
    sealJsonBytes,
    openJson,
  };
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
