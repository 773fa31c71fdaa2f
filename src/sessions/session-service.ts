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
import type { AlongsideRead, WriteStep } from '../storage/prepared-query.js';
import { activeSince, isExpired } from '../storage/repositories/session-expiry.js';
import type {
  CarriedSession,
  SessionHead,
  SessionRow,
  SessionsRepository,
} from '../storage/repositories/sessions-repository.js';
import type { StoredSealed } from '../storage/sealed-column.js';
import { afterElements, jsonArrayBytes, type TurnSealer } from './turn-sealer.js';
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
   * commits the writes in `together` in the same transaction. False when the service keeps
   * no turns (a window of 0): nothing was written, `together` neither.
   */
  record(turn: Turn, nowMs: number, together?: readonly WriteStep[]): Promise<boolean>;
  /** `CoreRequest.conversationId` of the session's turns: a keyed hash of key id and sessionId. */
  readonly conversationId: string;
}

/**
 * A session about to be opened by a turn: `read` is the read of its row that the turn's
 * reservation may carry (saving a round trip on PostgreSQL); `open` opens it with what that
 * read returned, or reads it itself when nothing was carried.
 */
export interface SessionPlan {
  readonly read: AlongsideRead;
  open(nowMs: number, carried: { readonly row: unknown } | undefined): Promise<OpenSession>;
}

export interface SessionService {
  open(keyId: string, sessionId: string, nowMs: number): Promise<OpenSession>;
  plan(keyId: string, sessionId: string): SessionPlan;
  /** All stored turns, or undefined when there is no live session. */
  read(keyId: string, sessionId: string, nowMs: number): Promise<StoredSessionTurn[] | undefined>;
  delete(keyId: string, sessionId: string, nowMs: number): Promise<boolean>;
  sweep(nowMs: number): Promise<number>;
}

export interface SessionOptions {
  readonly window: number;
  readonly ttlMs: number;
  /**
   * Characters of message and reply text kept decrypted in memory, in the windows of the
   * most recently used sessions (0: none), so that a session's next turn reads only its
   * row's head, not its sealed window.
   */
  readonly cachedWindowChars?: number;
}

/**
 * 4 million characters, so the cache's memory is bounded however long the messages are (the
 * windows' JSON bytes come on top, see `SessionState.stored`).
 */
const DEFAULT_CACHED_WINDOW_CHARS = 4_000_000;

export const SESSION_ID_PATTERN = /^[A-Za-z0-9._:@-]{1,128}$/;

/**
 * A turn as stored in the window: [message, reply, language, createdAt], and its Chat
 * Completions messages when it held more than text (see `Turn.wire`).
 */
type WindowEntry =
  | [string, string, Language, number]
  | [string, string, Language, number, readonly WireMessage[]];

interface SessionState {
  readonly hash: string;
  readonly turnCount: number;
  /** When the stored conversation began (0 for a session not stored yet). */
  readonly createdAt: number;
  /** When its last turn was stored (0 for a session not stored yet). */
  readonly lastActiveAt: number;
  readonly entries: WindowEntry[];
  /**
   * `entries` as the JSON array (UTF-8) they were read from the row as or last sealed as,
   * and how many turns it holds (before the window's bound). The next turn's write drops the
   * oldest turns from these bytes and appends its own, because encoding the whole window
   * again cost more than sealing it. Absent when the bytes are not those of
   * `entries` (an expired session): the write encodes the window whole.
   */
  readonly stored?: StoredWindow;
  /**
   * Read from the database for this turn (not found in the cache): the window is kept after
   * the write only if the cache took it when it was read (see `createWindowCache`), and
   * without `stored`; its next turn, if it finds it, encodes it once. With many more
   * sessions than the cache holds, the windows it takes are soon replaced, and their bytes
   * kept with them cost about a quarter more CPU per turn (old-generation collections).
   */
  readonly fresh?: boolean;
  /**
   * `entries` as the core's turns, made at the first turn that reads them: a window kept in
   * memory serves many turns, and its turns are made once. Kept on the state, not in a
   * WeakMap beside it: V8 promoted whatever such a map's entries held at the next
   * scavenge, every turn's window with them.
   */
  history?: readonly Turn[];
}

interface StoredWindow {
  readonly bytes: Buffer;
  readonly count: number;
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
  const windows = createWindowCache<SessionState>(
    options.cachedWindowChars ?? DEFAULT_CACHED_WINDOW_CHARS,
  );
  const sealedHere = createRecentSeals();

  async function load(keyId: string, hash: string, nowMs: number): Promise<SessionState> {
    return loadFrom(keyId, hash, windows.get(keyId, hash), nowMs);
  }

  /** The session, given the copy the cache holds (if any). */
  async function loadFrom(
    keyId: string,
    hash: string,
    cached: SessionState | undefined,
    nowMs: number,
  ): Promise<SessionState> {
    if (cached !== undefined) {
      // The copy is current when the row was not written since: same count, same beginning.
      const head = await sessions.head(keyId, hash);
      if (head === undefined) return gone(keyId, hash);
      if (head.turnCount === cached.turnCount && head.createdAt === cached.createdAt) {
        return stillCurrent(cached, head, nowMs);
      }
    }
    return fromRow(keyId, hash, await sessions.find(keyId, hash), nowMs);
  }

  /** `load` with the row read beside the reservation: current for `cached`, or whole. */
  async function loadCarried(
    keyId: string,
    hash: string,
    cached: SessionState | undefined,
    carried: CarriedSession,
    nowMs: number,
  ): Promise<SessionState> {
    const { row, current } = carried;
    if (row === undefined) return cached === undefined ? noSession(hash) : gone(keyId, hash);
    if (cached !== undefined && current) return stillCurrent(cached, row, nowMs);
    // Not current: the read brought the window (it leaves it out only for a current copy).
    return fromRow(keyId, hash, row, nowMs);
  }

  function gone(keyId: string, hash: string): SessionState {
    windows.forget(keyId, hash);
    sealedHere.forget(keyId, hash);
    return noSession(hash);
  }

  function stillCurrent(cached: SessionState, head: SessionHead, nowMs: number): SessionState {
    const expired = isExpired(head.lastActiveAt, activeSince(nowMs, options.ttlMs));
    if (!expired) return cached;
    return Object.assign({}, cached, { entries: [], stored: undefined, history: undefined });
  }

  async function fromRow(
    keyId: string,
    hash: string,
    row: SessionRow | undefined,
    nowMs: number,
  ): Promise<SessionState> {
    if (!row) return noSession(hash);
    const expired = isExpired(row.lastActiveAt, activeSince(nowMs, options.ttlMs));
    const opened =
      expired || row.sealedWindow === null
        ? { entries: [], stored: undefined }
        : windowOf(keyId, hash, row, row.sealedWindow);
    const state: SessionState = {
      hash,
      turnCount: row.turnCount,
      createdAt: row.createdAt,
      lastActiveAt: row.lastActiveAt,
      entries: opened.entries,
    };
    if (expired) return state;
    windows.offer(keyId, state);
    return Object.assign({}, state, { fresh: true, stored: opened.stored });
  }

  /**
   * A row's sealed window, opened; not decrypted again when it is the window a turn of this
   * process sealed (the session's turns stored together: see `createRecentSeals`).
   */
  function windowOf(
    keyId: string,
    hash: string,
    row: SessionRow,
    sealedWindow: StoredSealed,
  ): { entries: WindowEntry[]; stored: StoredWindow | undefined } {
    const written = sealedHere.find(keyId, hash, row);
    if (written !== undefined) return { entries: written.entries, stored: written.stored };
    const binding = windowBinding(keyId, hash, row.turnCount);
    const opened = sealer.openJsonBytes(sealedWindow, binding);
    // A window that does not open (other secret, tampered row) is not memory of this key.
    if (opened === undefined || !isWindow(opened.value)) return { entries: [], stored: undefined };
    const { value, bytes } = opened;
    return { entries: value.slice(-options.window), stored: { bytes, count: value.length } };
  }

  /**
   * This turn's entry after the window `stored` held, as the pieces of a JSON array for
   * `jsonArrayBytes`: the stored elements that stay (their bytes as kept, commas included)
   * and the new one. Undefined when the bytes cannot be cut (the window is sealed whole).
   */
  function afterStored(stored: StoredWindow, entry: WindowEntry): Buffer[] | undefined {
    const { bytes, count } = stored;
    const dropped = Math.max(0, count + 1 - options.window);
    if (dropped >= count) return [encode(entry)];
    const start = afterElements(bytes, dropped);
    if (start === -1 || bytes[bytes.length - 1] !== 0x5d) return undefined;
    return [bytes.subarray(start, bytes.length - 1), encode(entry)];
  }

  /**
   * The window of the session as locked for a write, with its JSON bytes when they are at
   * hand (see `StoredWindow`); synchronous, it runs under the lock.
   */
  function lockedWindow(
    keyId: string,
    opened: SessionState,
    row: SessionRow,
    nowMs: number,
  ): { entries: WindowEntry[]; stored: StoredWindow | undefined } {
    if (isExpired(row.lastActiveAt, activeSince(nowMs, options.ttlMs)))
      return { entries: [], stored: undefined };
    // Nobody wrote the session since it was opened (the usual case): the window read then
    // is the window now, and need not be decrypted again. A session deleted and begun again
    // to the same count since has another beginning: its window is read from the row.
    if (row.turnCount === opened.turnCount && row.createdAt === opened.createdAt) {
      return { entries: opened.entries, stored: opened.stored };
    }
    // A row the lock has just created holds no window yet.
    if (row.sealedWindow === null) return { entries: [], stored: undefined };
    // Written since: often by a turn of this process (concurrent turns of one session),
    // whose window `windowOf` takes without decrypting the row.
    return windowOf(keyId, opened.hash, row, row.sealedWindow);
  }

  /**
   * What a turn is stored after: the session as the turn opened it, or, when another turn of
   * this process has stored the session since (concurrent turns of one session), the window
   * that turn left in the cache. The write still checks the row's count and beginning, so a
   * window the cache holds wrongly only costs the locked way; the turn's core saw `opened`.
   */
  function latest(keyId: string, opened: SessionState): SessionState {
    const cached = windows.peek(keyId, opened.hash);
    return cached !== undefined && cached.turnCount > opened.turnCount ? cached : opened;
  }

  async function append(
    keyId: string,
    openedByTurn: SessionState,
    turn: Turn,
    nowMs: number,
    together: readonly WriteStep[] = [],
  ) {
    if (options.window === 0) return false;
    const opened = latest(keyId, openedByTurn);
    const entry = entryOf(turn, nowMs);
    /**
     * Seals `entries`, this turn after the window `before`: from its bytes when they are
     * kept, else the window encoded whole. Returns the JSON it sealed too, for the next turn,
     * and notes what it sealed for the turns of this session still to be written.
     */
    const sealEntries = (
      entries: WindowEntry[],
      count: number,
      before: StoredWindow | undefined,
    ): { sealed: Buffer; stored: StoredWindow } => {
      const pieces = before === undefined ? undefined : afterStored(before, entry);
      const json = pieces === undefined ? encodeWhole(entries) : jsonArrayBytes(pieces);
      const sealed = sealer.sealJsonBytes(json, windowBinding(keyId, opened.hash, count));
      const stored = { bytes: json, count: entries.length };
      sealedHere.note(keyId, opened.hash, { count, sealed, entries, stored });
      return { sealed, stored };
    };
    const since = activeSince(nowMs, options.ttlMs);
    const remember = (head: SessionHead, entries: WindowEntry[], stored: StoredWindow) => {
      // A window read from the database is kept only if the cache took it then (see offer),
      // and without its bytes (see `fresh`).
      if (opened.fresh === true && !windows.has(keyId, opened.hash)) return;
      windows.set(keyId, {
        hash: opened.hash,
        turnCount: head.turnCount,
        lastActiveAt: head.lastActiveAt,
        createdAt: head.createdAt,
        entries,
        stored: opened.fresh === true ? undefined : stored,
      });
    };

    // Usually nobody wrote the session since it was opened: its window is the one read
    // then, and one statement stores the next without taking a lock. Turns that must
    // commit with other writes, and turns of a session
    // that another turn of this process is writing beyond it take the locked way.
    if (together.length === 0 && !sealedHere.beyond(keyId, opened.hash, opened.turnCount)) {
      const stale = opened.turnCount === 0 || isExpired(opened.lastActiveAt, since);
      const entries = [...(stale ? [] : opened.entries), entry].slice(-options.window);
      const count = opened.turnCount + 1;
      const { sealed, stored } = sealEntries(entries, count, stale ? undefined : opened.stored);
      const change = {
        expectedCount: opened.turnCount,
        expectedCreatedAt: opened.createdAt,
        sealed,
        now: nowMs,
        activeSince: since,
      };
      if (await sessions.replaceWindow(keyId, opened.hash, change)) {
        const createdAt = stale ? nowMs : opened.createdAt;
        remember({ turnCount: count, createdAt, lastActiveAt: nowMs }, entries, stored);
        return true;
      }
    }

    let written: WindowEntry[] = [];
    let writtenStored: StoredWindow | undefined;
    const head = await sessions.appendTurn(keyId, opened.hash, {
      now: nowMs,
      activeSince: since,
      with: together,
      build: (row) => {
        const before = lockedWindow(keyId, opened, row, nowMs);
        written = [...before.entries, entry].slice(-options.window);
        const { sealed, stored } = sealEntries(written, row.turnCount + 1, before.stored);
        writtenStored = stored;
        return sealed;
      },
    });
    if (writtenStored !== undefined) remember(head, written, writtenStored);
    return true;
  }

  const toTurn = ([message, reply, language, , wire]: WindowEntry): Turn =>
    wire === undefined ? { message, reply, language } : { message, reply, language, wire };
  const historyOf = (state: SessionState): readonly Turn[] => {
    state.history ??= state.entries.map(toTurn);
    return state.history;
  };

  function plan(keyId: string, sessionId: string): SessionPlan {
    const hash = sealer.sessionHash(keyId, sessionId);
    // The copy the carried read is compared with (the cache may change before it returns).
    const cached = windows.get(keyId, hash);
    return {
      read: sessions.readAlongside(keyId, hash, cached),
      async open(nowMs, carried) {
        const state =
          carried === undefined
            ? await loadFrom(keyId, hash, cached, nowMs)
            : await loadCarried(keyId, hash, cached, sessions.carried(carried.row), nowMs);
        return {
          history: historyOf(state),
          record: (turn, at, together) => append(keyId, state, turn, at, together),
          conversationId: sealer.conversationId(keyId, sessionId),
        };
      },
    };
  }

  return {
    open: (keyId, sessionId, nowMs) => plan(keyId, sessionId).open(nowMs, undefined),
    plan,

    async read(keyId, sessionId, nowMs) {
      const { entries } = await load(keyId, sealer.sessionHash(keyId, sessionId), nowMs);
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
interface Sealed {
  readonly count: number;
  readonly sealed: Buffer;
  readonly entries: WindowEntry[];
  readonly stored: StoredWindow;
}

/** How many sessions' last sealed windows are remembered (see `createRecentSeals`). */
const RECENT_SEALS = 8;

/**
 * The windows this process sealed last, for a few sessions, whether or not their writes
 * have committed yet. When several turns of one session are stored at once, each takes the
 * locked way after the one before it (often in one transaction) and finds the row that turn
 * wrote: it need not decrypt and parse it again if the row holds the bytes sealed here. Nor
 * need a turn that opens the session while the window cache is still behind those writes. A
 * sealed value begins with a random IV, so equal bytes are that window; a write that rolled
 * back left other bytes on the row, and its note is never used. Slots are replaced in
 * place, not deleted and added, for the reason given in `sessions/window-cache.ts`.
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

/** One window entry as its element of the sealed JSON array. */
function encode(entry: WindowEntry): Buffer {
  return Buffer.from(JSON.stringify(entry));
}

/** A window as its JSON array, in a buffer of its own (see `jsonArrayBytes`). */
function encodeWhole(entries: readonly WindowEntry[]): Buffer {
  const json = JSON.stringify(entries);
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(json));
  bytes.write(json);
  return bytes;
}

function entryOf(turn: Turn, at: number): WindowEntry {
  return turn.wire === undefined
    ? [turn.message, turn.reply, turn.language, at]
    : [turn.message, turn.reply, turn.language, at, turn.wire];
}

function noSession(hash: string): SessionState {
  return { hash, turnCount: 0, createdAt: 0, lastActiveAt: 0, entries: [] };
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
