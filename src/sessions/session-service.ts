/**
 * @module sessions/session-service
 * Session memory: the window of earlier turns handed to the core, the turns a key holder
 * can read or delete, and the retention sweep. Always scoped by key id.
 *
 * The window is stored as one sealed value on the session's row, so a request reads its
 * memory with one row and one decryption. A turn is stored with a short read-modify-write
 * under the session's lock, after whatever the session holds by then: concurrent turns of
 * one session all land, in the order they finish, and none has to be retried.
 */
import type { Language, Turn, WireMessage } from '../core/core-adapter.js';
import { activeSince, isExpired } from '../storage/repositories/session-expiry.js';
import type {
  SessionHead,
  SessionRow,
  SessionsRepository,
} from '../storage/repositories/sessions-repository.js';
import type { StoredSealed } from '../storage/sealed-column.js';
import type { Writes } from '../storage/unit-of-work.js';
import type { TurnSealer } from './turn-sealer.js';
import { createWindowCache } from './window-cache.js';

interface StoredSessionTurn extends Turn {
  readonly createdAt: string;
}

/** A session as one request sees it: its memory, and how to add this request's turn. */
export interface OpenSession {
  /** The memory window, oldest first; empty for a new or expired session. */
  readonly history: readonly Turn[];
  /**
   * Appends a turn after the turns stored by then (also those stored since `open`), and
   * commits the writes in `together` in the same transaction. Nothing is written, `together`
   * neither, when the service keeps no turns (`off`, a window of 0) or the turn alone is
   * larger than the window's byte bound (`too_large`).
   */
  record(turn: Turn, nowMs: number, together?: Writes): Promise<Recorded>;
  /** `CoreRequest.conversationId` of the session's turns: a keyed hash of key id and sessionId. */
  readonly conversationId: string;
}

/** What became of a turn given to `OpenSession.record`. */
export type Recorded = 'stored' | 'off' | 'too_large';

export interface SessionService {
  open(keyId: string, sessionId: string, nowMs: number): Promise<OpenSession>;
  /** All stored turns, or undefined when there is no live session. */
  read(keyId: string, sessionId: string, nowMs: number): Promise<StoredSessionTurn[] | undefined>;
  delete(keyId: string, sessionId: string, nowMs: number): Promise<boolean>;
  sweep(nowMs: number): Promise<number>;
}

export interface SessionOptions {
  readonly window: number;
  readonly ttlMs: number;
  /**
   * The most bytes a window holds: the sum of its turns' JSON bytes, every part counted
   * (text, tool calls and results, images); the oldest turns leave first.
   */
  readonly maxBytes: number;
}

/**
 * Bytes of the windows kept decrypted in memory, for the most recently used sessions, so
 * that a session's next turn reads only its row's head, not its sealed window. A window
 * counts its turns' bytes as the byte bound does, twice (each kept turn is held decoded, and
 * as the JSON bytes the next seal joins), so the bound holds the memory whatever the turns
 * carry (docs/sessions.md).
 */
const CACHED_WINDOW_BYTES = 32 * 1024 * 1024;

export const SESSION_ID_PATTERN = /^[A-Za-z0-9._:@-]{1,128}$/;

/**
 * A turn as stored in the window: [message, reply, language, createdAt], and its Chat
 * Completions messages when it held more than text (see `Turn.wire`).
 */
type WindowEntry =
  | [string, string, Language, number]
  | [string, string, Language, number, readonly WireMessage[]];

/**
 * A memory window: its turns, oldest first, and, once a turn of this process sealed it, each
 * turn's JSON bytes, so that the next turn seals the window without encoding it all again.
 */
interface Window {
  readonly entries: readonly WindowEntry[];
  readonly encoded?: readonly Buffer[];
  /** Without `encoded`: the JSON bytes of the stored window the entries were read from. */
  readonly bytes?: number;
}

/** A session as a turn read it. */
interface SessionState extends Window {
  readonly hash: string;
  readonly turnCount: number;
  /** When the stored conversation began (0 for a session not stored yet). */
  readonly createdAt: number;
  /** When its last turn was stored (0 for a session not stored yet). */
  readonly lastActiveAt: number;
}

/** The additional data of a sealed window: its key, its session and its write count. */
const windowBinding = (keyId: string, hash: string, count: number) =>
  `${keyId}\0${hash}\0window\0${count}`;

/**
 * Seals a memory window as `createSessionService` stores it on the session row with
 * `turn_count = count` (bulk loaders use this to write sessions the service can read).
 * @public used by the bench's seeder through dist/, which the dead-code check cannot see.
 */
export function sealWindow(
  sealer: TurnSealer,
  keyId: string,
  sessionHash: string,
  count: number,
  turns: readonly (Turn & { readonly createdAt: number })[],
): Buffer {
  const entries: WindowEntry[] = turns.map((t) => entryOf(t, t.createdAt));
  return sealer.sealJson(entries, windowBinding(keyId, sessionHash, count));
}

export function createSessionService(
  sessions: SessionsRepository,
  sealer: TurnSealer,
  options: SessionOptions,
): SessionService {
  const expired = (row: SessionHead, nowMs: number) =>
    isExpired(row.lastActiveAt, activeSince(nowMs, options.ttlMs));
  const windows = createWindowCache<SessionState>(CACHED_WINDOW_BYTES);
  const sealedHere = createRecentSeals();

  /**
   * The session as this turn finds it: the copy kept in memory when the row is still at its
   * count and beginning (a session deleted and begun again has another beginning), else read
   * from the row.
   */
  async function load(
    keyId: string,
    hash: string,
    cached: SessionState | undefined,
    nowMs: number,
  ): Promise<SessionState> {
    let row: SessionRow | undefined;
    if (cached !== undefined) {
      row = await sessions.findUnless(keyId, hash, cached);
      if (row?.turnCount === cached.turnCount && row.createdAt === cached.createdAt) {
        return stillCurrent(cached, row, nowMs);
      }
    } else {
      row = await sessions.find(keyId, hash);
    }
    if (row === undefined) {
      windows.forget(keyId, hash);
      sealedHere.forget(keyId, hash);
    }
    const state = stateOf(keyId, hash, row, nowMs);
    if (row !== undefined) windows.offer(keyId, state);
    return state;
  }

  function stillCurrent(cached: SessionState, head: SessionHead, nowMs: number): SessionState {
    return expired(head, nowMs) ? Object.assign({}, cached, NO_WINDOW) : cached;
  }

  /**
   * The row's window, opened (not decrypted again when it is the window a turn of this
   * process sealed); empty when it has none, has expired or does not open.
   */
  function windowOf(keyId: string, hash: string, row: SessionRow, nowMs: number): Window {
    if (row.sealedWindow === null || expired(row, nowMs)) return NO_WINDOW;
    const written = sealedHere.find(keyId, hash, row);
    if (written !== undefined) return written;
    const value = sealer.openJson(row.sealedWindow, windowBinding(keyId, hash, row.turnCount));
    // A window that does not open (other secret, tampered row) is not memory of this key.
    if (!isWindow(value)) return NO_WINDOW;
    const entries = value.slice(-options.window);
    // Its JSON is shorter than its sealed value: within the bound, so is every part of it.
    const bytes = storedBytes(row.sealedWindow);
    if (bytes <= options.maxBytes) return { entries, bytes };
    return withinBytes(entries, entries.map(encode), options.maxBytes);
  }

  function stateOf(
    keyId: string,
    hash: string,
    row: SessionRow | undefined,
    nowMs: number,
  ): SessionState {
    if (row === undefined)
      return { hash, turnCount: 0, createdAt: 0, lastActiveAt: 0, entries: [] };
    const { turnCount, createdAt, lastActiveAt } = row;
    const { entries, encoded, bytes } = windowOf(keyId, hash, row, nowMs);
    return { hash, turnCount, createdAt, lastActiveAt, entries, encoded, bytes };
  }

  async function append(
    keyId: string,
    opened: SessionState,
    turn: Turn,
    nowMs: number,
    together?: Writes,
  ) {
    if (options.window === 0) return 'off';
    const { hash } = opened;
    const entry = entryOf(turn, nowMs);
    const since = activeSince(nowMs, options.ttlMs);
    const encodedEntry = encode(entry);
    // A turn that alone exceeds the bound is not stored (docs/sessions.md).
    if (encodedEntry.length > options.maxBytes) return 'too_large';
    let entries: readonly WindowEntry[] = [];
    let encoded: readonly Buffer[] = [];
    const seal = (before: Window, count: number) => {
      ({ entries, encoded } = withinBytes(
        [...before.entries, entry].slice(-options.window),
        [...(before.encoded ?? before.entries.map(encode)), encodedEntry].slice(-options.window),
        options.maxBytes,
      ));
      const sealed = sealer.sealJsonBytes(jsonArray(encoded), windowBinding(keyId, hash, count));
      sealedHere.note(keyId, hash, { count, sealed, entries, encoded });
      return sealed;
    };
    // A window the cache declined when it was read (see `offer`) is not kept after the write.
    const remember = (head: SessionHead) => {
      if (opened.turnCount > 0 && !windows.has(keyId, hash)) return;
      windows.set(keyId, Object.assign({ hash, entries, encoded }, head));
    };

    // Usually nobody wrote the session since it was opened: its window is the one read
    // then, and one statement stores the next without taking a lock. Turns that must
    // commit with other writes, and turns of a session that another turn of this process is
    // writing beyond it, take the locked way.
    if (together === undefined && !sealedHere.beyond(keyId, hash, opened.turnCount)) {
      const stale = opened.turnCount === 0 || isExpired(opened.lastActiveAt, since);
      const change = {
        expectedCount: opened.turnCount,
        expectedCreatedAt: opened.createdAt,
        sealed: seal(stale ? NO_WINDOW : opened, opened.turnCount + 1),
        now: nowMs,
        activeSince: since,
      };
      if (await sessions.replaceWindow(keyId, hash, change)) {
        const createdAt = stale ? nowMs : opened.createdAt;
        remember({ turnCount: opened.turnCount + 1, createdAt, lastActiveAt: nowMs });
        return 'stored';
      }
    }

    const head = await sessions.appendTurn(keyId, hash, {
      now: nowMs,
      activeSince: since,
      with: together,
      build: (row) => {
        // Unchanged since it was opened: the window read then is the window now. A session
        // deleted and begun again to the same count since has another beginning.
        const unchanged = row.turnCount === opened.turnCount && row.createdAt === opened.createdAt;
        const before =
          unchanged && !expired(row, nowMs) ? opened : windowOf(keyId, hash, row, nowMs);
        return seal(before, row.turnCount + 1);
      },
    });
    remember(head);
    return 'stored';
  }

  return {
    async open(keyId, sessionId, nowMs) {
      const hash = sealer.sessionHash(keyId, sessionId);
      const state = await load(keyId, hash, windows.get(keyId, hash), nowMs);
      return {
        history: state.entries.map(toTurn),
        record: (turn, at, together) => append(keyId, state, turn, at, together),
        conversationId: sealer.conversationId(keyId, sessionId),
      };
    },

    async read(keyId, sessionId, nowMs) {
      const hash = sealer.sessionHash(keyId, sessionId);
      const { entries } = await load(keyId, hash, windows.get(keyId, hash), nowMs);
      if (entries.length === 0) return undefined;
      return entries.map(([message, reply, language, at]) => ({
        message,
        reply,
        language,
        createdAt: new Date(at).toISOString(),
      }));
    },

    delete(keyId, sessionId, nowMs) {
      const hash = sealer.sessionHash(keyId, sessionId);
      windows.forget(keyId, hash);
      sealedHere.forget(keyId, hash);
      return sessions.delete(keyId, hash, activeSince(nowMs, options.ttlMs));
    },

    async sweep(nowMs) {
      const swept = await sessions.sweep(activeSince(nowMs, options.ttlMs));
      if (swept > 0) {
        windows.clear();
        sealedHere.clear();
      }
      return swept;
    },
  };
}

/** A window this process sealed for a session's row, and what it holds. */
interface Sealed extends Window {
  readonly count: number;
  readonly sealed: Buffer;
}

/** How many sessions' last sealed windows are remembered (see `createRecentSeals`). */
const RECENT_SEALS = 8;

/**
 * The windows this process sealed last, for a few sessions, whether or not their writes
 * have committed yet. When several turns of one session are stored at once, each takes the
 * locked way after the one before it (often in one transaction) and finds the row that turn
 * wrote: it need not decrypt and parse it again if the row holds the bytes sealed here, nor
 * seal a window that cannot be stored without the lock. A sealed value begins with a random
 * IV, so equal bytes are that window; a write that rolled back left other bytes on the row,
 * and its note is never used. Slots are replaced in place, not deleted and added, for the
 * reason given in `sessions/window-cache.ts`.
 */
function createRecentSeals() {
  const slots: { keyId: string; hash: string; sealed: Sealed | undefined }[] = [];
  let next = 0;
  const slotOf = (keyId: string, hash: string) =>
    slots.find((slot) => slot.hash === hash && slot.keyId === keyId);
  return {
    note(keyId: string, hash: string, sealed: Sealed): void {
      const slot = slotOf(keyId, hash);
      if (slot !== undefined) {
        slot.sealed = sealed;
      } else if (slots.length < RECENT_SEALS) {
        slots.push({ keyId, hash, sealed });
      } else {
        slots[next] = { keyId, hash, sealed };
        next = (next + 1) % RECENT_SEALS;
      }
    },
    /** True when a window of more than `count` turns was sealed here for the session. */
    beyond(keyId: string, hash: string, count: number): boolean {
      const slot = slotOf(keyId, hash);
      return slot?.sealed !== undefined && slot.sealed.count > count;
    },
    /** The window sealed here that `row` holds, if it holds one. */
    find(keyId: string, hash: string, row: SessionRow): Sealed | undefined {
      const sealed = slotOf(keyId, hash)?.sealed;
      if (sealed === undefined || sealed.count !== row.turnCount || row.sealedWindow === null) {
        return undefined;
      }
      return sameSealed(row.sealedWindow, sealed.sealed) ? sealed : undefined;
    },
    /** Drops the session's note (its turns are deleted: none stays in memory). */
    forget(keyId: string, hash: string): void {
      const slot = slotOf(keyId, hash);
      if (slot !== undefined) slot.sealed = undefined;
    },
    clear(): void {
      for (const slot of slots) slot.sealed = undefined;
    },
  };
}

/** Whether a column's sealed value (bytes, or their base64url text) is `sealed`. */
function sameSealed(stored: StoredSealed, sealed: Buffer): boolean {
  return typeof stored === 'string'
    ? stored.length === Math.ceil((sealed.length * 4) / 3) &&
        Buffer.from(stored, 'base64url').equals(sealed)
    : sealed.equals(stored);
}

const NO_WINDOW: Window = { entries: [], encoded: [] };

const encode = (entry: WindowEntry) => Buffer.from(JSON.stringify(entry));

/**
 * The newest turns whose JSON bytes (`encoded`, one per entry) add up to at most `maxBytes`:
 * the oldest leave the window first.
 */
function withinBytes(
  entries: readonly WindowEntry[],
  encoded: readonly Buffer[],
  maxBytes: number,
): { entries: readonly WindowEntry[]; encoded: readonly Buffer[] } {
  let bytes = 0;
  let first = encoded.length;
  while (first > 0) {
    const size = (encoded[first - 1] as Buffer).length;
    if (bytes + size > maxBytes) break;
    bytes += size;
    first -= 1;
  }
  if (first === 0) return { entries, encoded };
  return { entries: entries.slice(first), encoded: encoded.slice(first) };
}

/** The bytes of a sealed column's value (its base64url text decodes to three in four). */
function storedBytes(stored: StoredSealed): number {
  return typeof stored === 'string' ? Math.floor((stored.length * 3) / 4) : stored.length;
}

/** The JSON array of elements given as their JSON bytes. */
function jsonArray(elements: readonly Buffer[]): Buffer {
  const parts: Buffer[] = [OPEN];
  for (const [i, element] of elements.entries()) {
    if (i > 0) parts.push(COMMA);
    parts.push(element);
  }
  parts.push(CLOSE);
  return Buffer.concat(parts);
}
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

function toTurn([message, reply, language, , wire]: WindowEntry): Turn {
  return wire === undefined ? { message, reply, language } : { message, reply, language, wire };
}

function entryOf(turn: Turn, at: number): WindowEntry {
  return turn.wire === undefined
    ? [turn.message, turn.reply, turn.language, at]
    : [turn.message, turn.reply, turn.language, at, turn.wire];
}

function isWindow(value: unknown): value is WindowEntry[] {
  return (
    Array.isArray(value) &&
    value.every(
      (entry) =>
        Array.isArray(entry) &&
        typeof entry[0] === 'string' &&
        typeof entry[1] === 'string' &&
        (entry[2] === 'de' || entry[2] === 'en') &&
        typeof entry[3] === 'number' &&
        (entry.length === 4 || (entry.length === 5 && Array.isArray(entry[4]))),
    )
  );
}
