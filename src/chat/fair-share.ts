/**
 * @module chat/fair-share
 * Fair share of an instance among keys (docs/contract.md, "Burst limits"): how many turns of
 * one key run at once, the turns of a key that wait for one of its places, first come first
 * served, and the core's connections shared round-robin among the keys waiting for them.
 *
 * A turn beyond its key's places waits instead of being refused, so an honest burst is
 * answered in full, only later; waiting is bounded in number (`queue`) and time
 * (`timeoutMs`), and a waiting turn whose client leaves is dropped at once. Nothing is
 * reserved while a turn waits: the caller waits first, then reserves.
 *
 * Two kinds of place, taken in this order:
 * - a key's place ({@link KeyPlaces}): at most `max` turns of one key at once; held until the
 *   turn's answer has been handed over;
 * - a core slot ({@link CoreSlots}), only for a core with a bounded pool of upstream
 *   connections: held while the core works. When every slot is taken, the next one freed goes
 *   to the key that has waited longest for its turn in the rotation, not to whichever request
 *   came first, so a tenant with many keys cannot make another key wait behind all of them.
 */
import type { CancelSignal } from '../util/cancellation.js';

/** A place held by a turn; `release` gives it back (a second call does nothing). */
export interface Place {
  release(): void;
}

/** How a wait for a place ended. */
export type Waited =
  | { readonly ok: true; readonly place: Place; readonly waitedMs: number }
  | {
      readonly ok: false;
      readonly why: 'queue_full' | 'timeout' | 'gone';
      readonly waitedMs: number;
    };

export interface KeyLimits {
  /** Turns of the key that may run at once. */
  readonly max: number;
  /** Turns of the key that may wait at once. */
  readonly queue: number;
  /** How long one turn may wait. */
  readonly timeoutMs: number;
}

/** The real-time clock a wait is measured with (tests may pass their own). */
export type Monotonic = () => number;

const monotonicNow: Monotonic = () => performance.now();

/** One turn waiting for a place. */
interface Waiter {
  readonly keyId: string;
  readonly since: number;
  settle(waited: Waited): void;
}

/** The places of one key, while it has turns running or waiting. */
interface KeyState {
  running: number;
  readonly waiting: Waiter[];
}

/**
 * Places of every key on this instance. A key's state exists only while it has turns running
 * or waiting, so an idle key costs nothing.
 */
export class KeyPlaces {
  private readonly keys = new Map<string, KeyState>();

  constructor(private readonly now: Monotonic = monotonicNow) {}

  /** A place for a turn of `keyId` at once, or undefined when the key has none free. */
  tryTake(keyId: string, max: number): Place | undefined {
    const state = this.keys.get(keyId);
    if (state === undefined) {
      this.keys.set(keyId, { running: 1, waiting: [] });
      return this.place(keyId);
    }
    // Turns already waiting come first: a new one never overtakes them.
    if (state.running >= max || state.waiting.length > 0) return undefined;
    state.running++;
    return this.place(keyId);
  }

  /** Waits for a place of `keyId`, first come first served, within `limits`. */
  wait(keyId: string, limits: KeyLimits, signal: CancelSignal): Promise<Waited> {
    const place = this.tryTake(keyId, limits.max);
    if (place) return Promise.resolve({ ok: true, place, waitedMs: 0 });
    const state = this.keys.get(keyId);
    if (state === undefined || state.waiting.length >= limits.queue) {
      return Promise.resolve({ ok: false, why: 'queue_full', waitedMs: 0 });
    }
    return queue(state.waiting, keyId, limits.timeoutMs, signal, this.now, () =>
      this.forget(keyId),
    );
  }

  /** Turns of `keyId` running on this instance now (for tests and metrics). */
  running(keyId: string): number {
    return this.keys.get(keyId)?.running ?? 0;
  }

  private place(keyId: string): Place {
    return once(() => this.release(keyId));
  }

  /** A place given back goes to the key's first waiting turn, or is freed. */
  private release(keyId: string): void {
    const state = this.keys.get(keyId);
    if (state === undefined) return;
    const next = state.waiting.shift();
    if (next) {
      next.settle({ ok: true, place: this.place(keyId), waitedMs: this.now() - next.since });
      return;
    }
    state.running--;
    this.forget(keyId);
  }

  private forget(keyId: string): void {
    const state = this.keys.get(keyId);
    if (state && state.running <= 0 && state.waiting.length === 0) this.keys.delete(keyId);
  }
}

/**
 * The slots of a core's connection pool, shared among keys.
 * - A freed slot goes to the waiting key that holds the fewest slots, the first in the
 *   rotation among equals, which then goes to the end of it: each waiting key gets slots in
 *   turn however many turns it has waiting, and a key that holds few goes first.
 * - The last eighth of the pool is a reserve for keys that hold no slot: a key arriving while
 *   others fill the pool finds one at once instead of waiting for one of theirs to end. One
 *   key alone may use the whole pool; several keys that fill it leave the reserve idle (at
 *   most an eighth of the pool, the price of never making a new key wait for them).
 */
export class CoreSlots {
  private free: number;
  private readonly reserve: number;
  /** Keys holding or waiting for slots; a key is forgotten when it does neither. */
  private readonly keys = new Map<string, { held: number; readonly waiting: Waiter[] }>();
  /** The keys with turns waiting, in the order of the rotation. */
  private readonly rotation = new Set<string>();

  constructor(
    capacity: number,
    private readonly now: Monotonic = monotonicNow,
  ) {
    this.free = capacity;
    this.reserve = Math.floor(capacity / 8);
  }

  /** Waits for a slot for a turn of `keyId`; `timeoutMs` bounds the wait. */
  wait(keyId: string, timeoutMs: number, signal: CancelSignal): Promise<Waited> {
    let state = this.keys.get(keyId);
    if (state === undefined) {
      state = { held: 0, waiting: [] };
      this.keys.set(keyId, state);
    }
    if (state.waiting.length === 0 && this.mayTake(state.held)) {
      return Promise.resolve({ ok: true, place: this.take(keyId), waitedMs: 0 });
    }
    this.rotation.add(keyId);
    const waiting = queue(state.waiting, keyId, timeoutMs, signal, this.now, () => {
      this.tidy(keyId);
      // One key fewer in the pool: others' fair share may have grown.
      this.dispatch();
    });
    // The reserve may hold a slot this key may take after all (it holds less than its share).
    this.dispatch();
    return waiting;
  }

  /**
   * Whether a key holding `held` slots may take a free one now: any key while more than the
   * reserve is free; else only a key that holds none, so that a key arriving while others fill
   * the pool starts at once. A key alone may take all.
   */
  private mayTake(held: number): boolean {
    if (this.free <= 0) return false;
    if (this.free > this.reserve || this.keys.size <= 1) return true;
    return held === 0;
  }

  private take(keyId: string): Place {
    const state = this.keys.get(keyId);
    if (state) state.held++;
    this.free--;
    return once(() => this.release(keyId));
  }

  private release(keyId: string): void {
    const state = this.keys.get(keyId);
    if (state) state.held--;
    this.free++;
    this.tidy(keyId);
    this.dispatch();
  }

  /**
   * Hands free slots to waiting turns: each to the waiting key that holds the fewest (first in
   * the rotation among equals), while any may take one.
   */
  private dispatch(): void {
    while (this.free > 0) {
      let chosen: string | undefined;
      let fewest = Number.POSITIVE_INFINITY;
      for (const keyId of this.rotation) {
        const held = this.keys.get(keyId)?.held ?? 0;
        if (held < fewest && this.mayTake(held)) {
          chosen = keyId;
          fewest = held;
        }
      }
      const state = chosen === undefined ? undefined : this.keys.get(chosen);
      const next = state?.waiting.shift();
      if (chosen === undefined || state === undefined || next === undefined) return;
      this.rotation.delete(chosen);
      if (state.waiting.length > 0) this.rotation.add(chosen);
      next.settle({ ok: true, place: this.take(chosen), waitedMs: this.now() - next.since });
    }
  }

  private tidy(keyId: string): void {
    const state = this.keys.get(keyId);
    if (state === undefined) return;
    if (state.waiting.length === 0) this.rotation.delete(keyId);
    if (state.held <= 0 && state.waiting.length === 0) this.keys.delete(keyId);
  }
}

/**
 * Puts a waiter at the end of `line`: it is settled by whoever hands it a place, or leaves
 * the line when its time is up or its client goes away (`left` then tidies up).
 */
function queue(
  line: Waiter[],
  keyId: string,
  timeoutMs: number,
  signal: CancelSignal,
  now: Monotonic,
  left: () => void,
): Promise<Waited> {
  if (signal.aborted) return Promise.resolve({ ok: false, why: 'gone', waitedMs: 0 });
  return new Promise<Waited>((resolve) => {
    const since = now();
    const leave = (why: 'timeout' | 'gone') => {
      const index = line.indexOf(waiter);
      if (index < 0) return;
      line.splice(index, 1);
      done();
      left();
      resolve({ ok: false, why, waitedMs: now() - since });
    };
    const onAbort = () => leave('gone');
    const timer = setTimeout(() => leave('timeout'), timeoutMs);
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    };
    const waiter: Waiter = {
      keyId,
      since,
      settle(waited) {
        done();
        // A place handed to a client that has just left goes straight back.
        if (waited.ok && signal.aborted) {
          waited.place.release();
          resolve({ ok: false, why: 'gone', waitedMs: waited.waitedMs });
          return;
        }
        resolve(waited);
      },
    };
    signal.addEventListener('abort', onAbort, { once: true });
    line.push(waiter);
  });
}

function once(release: () => void): Place {
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      release();
    },
  };
}
