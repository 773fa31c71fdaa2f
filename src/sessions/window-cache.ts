/**
 * @module sessions/window-cache
 * Decrypted windows of recently used sessions, by key id and session hash, each with the
 * row's count and beginning it was read or written at; the least recently used go first
 * when together they exceed `budget` bytes. A window counts the JSON bytes of its turns,
 * every part of them (text, tool calls and results, images), as the session's byte bound
 * does (docs/sessions.md), twice when it also holds them encoded.
 *
 * Each cached session has one slot for as long as it stays cached. A turn puts its window
 * into the slot and moves the slot to the front of a linked list; the `Map` is written only
 * when a session comes in or goes out. The first version deleted and set the `Map`'s entry
 * at every lookup and every write. Once a `Map` is in the old generation, that makes V8
 * promote what the `Map` held, though it was replaced long before the next scavenge, and
 * under load that brought frequent full collections.
 *
 * With many more sessions in use than it holds, a cache that took every window read from
 * the database would evict each before its session's next turn: no hits, and every window
 * kept just long enough for the garbage collector to move it to the old generation (more
 * CPU per turn than no cache at all). So when it is
 * full and fewer than a quarter of its lookups hit, it takes only one such window in 16;
 * those stay long enough to be used again, and a working set that fits gets in as before.
 */

/** What the cache needs of a window: its session, its turns, and their JSON bytes if kept. */
export interface CachedWindow {
  readonly hash: string;
  readonly entries: readonly (readonly unknown[])[];
  /** Each turn's JSON bytes, when the window keeps them for its next seal. */
  readonly encoded?: readonly Uint8Array[];
  /** Else, when known, the JSON bytes of the whole window (its stored size, an upper bound). */
  readonly bytes?: number;
}

export interface WindowCache<S extends CachedWindow> {
  /** The window kept for the session, now the most recently used; undefined if none. */
  get(keyId: string, hash: string): S | undefined;
  /** Keeps `state` as the session's window (replacing the one kept), unless it exceeds the budget. */
  set(keyId: string, state: S): void;
  /**
   * A window read from the database: kept when there is room, or while the cache is not
   * thrashing; else one in `THRASHING_ADMITS_ONE_IN`. True when it was kept.
   */
  offer(keyId: string, state: S): boolean;
  has(keyId: string, hash: string): boolean;
  forget(keyId: string, hash: string): void;
  clear(): void;
}

/** Lookups after which the cache judges its share of hits again. */
const HIT_RATIO_LOOKUPS = 1024;
/** A full cache with a smaller share of hits than this is thrashing (see `offer`). */
const THRASHING_HIT_RATIO = 0.25;
/** While the cache thrashes, one window in this many read from the database enters it. */
const THRASHING_ADMITS_ONE_IN = 16;

/** A cached session's place: its window, and its neighbours in the order of use. */
interface Slot<S> {
  readonly key: string;
  state: S;
  size: number;
  newer: Slot<S> | undefined;
  older: Slot<S> | undefined;
}

export function createWindowCache<S extends CachedWindow>(budget: number): WindowCache<S> {
  const slots = new Map<string, Slot<S>>();
  let newest: Slot<S> | undefined;
  let oldest: Slot<S> | undefined;
  let total = 0;
  let lookups = 0;
  let hits = 0;
  let thrashing = false;
  let declined = 0;

  const id = (keyId: string, hash: string) => `${keyId}\0${hash}`;
  const sizeOf = (state: S) => {
    let size = 0;
    if (state.encoded !== undefined) {
      // Held twice: decoded, and as these bytes.
      for (const bytes of state.encoded) size += 2 * bytes.length;
      return size;
    }
    if (state.bytes !== undefined) return state.bytes;
    for (const entry of state.entries) size += Buffer.byteLength(JSON.stringify(entry));
    return size;
  };
  const unlink = (slot: Slot<S>) => {
    const { newer, older } = slot;
    if (newer) newer.older = older;
    else newest = older;
    if (older) older.newer = newer;
    else oldest = newer;
    slot.newer = undefined;
    slot.older = undefined;
  };
  const linkNewest = (slot: Slot<S>) => {
    slot.older = newest;
    if (newest) newest.newer = slot;
    else oldest = slot;
    newest = slot;
  };
  /** Makes `slot` the most recently used. */
  const touch = (slot: Slot<S>) => {
    if (slot === newest) return;
    unlink(slot);
    linkNewest(slot);
  };
  const remove = (slot: Slot<S>) => {
    unlink(slot);
    slots.delete(slot.key);
    total -= slot.size;
  };
  const set = (keyId: string, state: S, size = sizeOf(state)): void => {
    const key = id(keyId, state.hash);
    let slot = slots.get(key);
    if (size > budget) {
      if (slot) remove(slot);
      return;
    }
    if (slot) {
      total += size - slot.size;
      slot.state = state;
      slot.size = size;
      touch(slot);
    } else {
      slot = { key, state, size, newer: undefined, older: undefined };
      slots.set(key, slot);
      linkNewest(slot);
      total += size;
    }
    // The new window fits on its own: the least recently used others make room for it.
    while (total > budget && oldest !== undefined && oldest !== slot) remove(oldest);
  };

  return {
    get(keyId, hash) {
      const slot = slots.get(id(keyId, hash));
      lookups++;
      if (slot !== undefined) hits++;
      if (lookups === HIT_RATIO_LOOKUPS) {
        thrashing = hits < lookups * THRASHING_HIT_RATIO;
        lookups = 0;
        hits = 0;
      }
      if (slot === undefined) return undefined;
      touch(slot);
      return slot.state;
    },
    set: (keyId, state) => set(keyId, state),
    offer(keyId, state) {
      const size = sizeOf(state);
      if (total + size > budget && thrashing && ++declined % THRASHING_ADMITS_ONE_IN !== 0) {
        return false;
      }
      set(keyId, state, size);
      return slots.has(id(keyId, state.hash));
    },
    has: (keyId, hash) => slots.has(id(keyId, hash)),
    forget(keyId, hash) {
      const slot = slots.get(id(keyId, hash));
      if (slot) remove(slot);
    },
    clear() {
      slots.clear();
      newest = undefined;
      oldest = undefined;
      total = 0;
    },
  };
}
