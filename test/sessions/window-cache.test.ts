/**
 * The window cache (window-cache.ts): the least recently used windows go first when their
 * bytes (every part of their turns, as JSON) exceed the budget, as in a plain list kept in the order of use; with many more
 * sessions in use than it holds, a full cache that rarely hits takes only one window in 16
 * read from the database, and a working set that fits is kept whole, also after a phase of
 * thrashing. Through the session service: a session's next turn on the same instance reads
 * only its row's head.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createSessionService } from '../../src/sessions/session-service.js';
import { createTurnSealer } from '../../src/sessions/turn-sealer.js';
import { createWindowCache } from '../../src/sessions/window-cache.js';
import { createStore } from '../../src/storage/create-database.js';
import { createKeysRepository } from '../../src/storage/repositories/keys-repository.js';
import {
  createSessionsRepository,
  type SessionRow,
  type SessionsRepository,
} from '../../src/storage/repositories/sessions-repository.js';
import { createTestDatabase } from '../helpers/test-database.js';

const KEY = 'key_test';
const HOLDS = 10;

function window(hash: string) {
  return {
    hash,
    turnCount: 1,
    createdAt: 1,
    lastActiveAt: 1,
    entries: [['m'.repeat(50), 'r'.repeat(50), 'de', 1] as [string, string, 'de', number]],
  };
}

/** What the cache counts of a window: its turns' JSON bytes. */
function bytesOf(state: { entries: readonly unknown[] }): number {
  return state.entries.reduce<number>((sum, e) => sum + Buffer.byteLength(JSON.stringify(e)), 0);
}
/** Each window: one turn of 50 + 50 characters. */
const WINDOW_BYTES = bytesOf(window('s0'));

/** Turns on `sessions`, in order, `rounds` times: a lookup, and on a miss the window offered. */
function turns(cache: ReturnType<typeof createWindowCache>, sessions: number, rounds: number) {
  let hits = 0;
  let offered = 0;
  let kept = 0;
  for (let round = 0; round < rounds; round++) {
    for (let s = 0; s < sessions; s++) {
      const hash = `s${s}`;
      if (cache.get(KEY, hash) !== undefined) {
        hits++;
        continue;
      }
      offered++;
      if (cache.offer(KEY, window(hash))) kept++;
    }
  }
  return { hits, offered, kept };
}

describe('the window cache admission', () => {
  it('keeps a working set that fits: after the first turn of each session, every lookup hits', () => {
    const cache = createWindowCache(HOLDS * WINDOW_BYTES);
    const { hits, offered, kept } = turns(cache, HOLDS, 300);
    expect(offered).toBe(HOLDS);
    expect(kept).toBe(HOLDS);
    expect(hits).toBe(HOLDS * 299);
  });

  it('takes every window until it finds itself thrashing, then one in 16, and those are used again', () => {
    const cache = createWindowCache(HOLDS * WINDOW_BYTES);
    // 100 sessions in turn through a cache of 10: each window is evicted before its next turn.
    const first = turns(cache, 100, 10); // 1000 lookups: not judged yet
    expect(first.kept).toBe(first.offered);
    expect(first.hits).toBe(0);

    turns(cache, 100, 1); // the 1024th lookup: judged thrashing
    const later = turns(cache, 100, 100);
    const share = later.kept / later.offered;
    expect(share).toBeGreaterThan(1 / 17);
    expect(share).toBeLessThan(1 / 15);
    // Kept longer, some of its windows now last until their session's next turn.
    expect(later.hits).toBeGreaterThan(0);
  });

  it('takes every window again once the working set fits (it judges its hits anew)', () => {
    const cache = createWindowCache(HOLDS * WINDOW_BYTES);
    turns(cache, 100, 30); // thrashing
    expect(turns(cache, 100, 1).kept).toBeLessThan(20);

    // Five sessions now: they get in, hit, and the next judgement ends the thrashing.
    turns(cache, 5, 600);
    // A new session's window is kept at once again, as in a cache that never thrashed.
    expect(cache.offer(KEY, window('new'))).toBe(true);
    expect(turns(cache, 5, 10).hits).toBe(50);
  });

  it('never keeps a window larger than the whole cache', () => {
    const cache = createWindowCache(WINDOW_BYTES - 1);
    expect(cache.offer(KEY, window('big'))).toBe(false);
    expect(cache.get(KEY, 'big')).toBeUndefined();
  });
});

/** The same rules kept the plain way, for comparison: an array, least recently used first. */
function referenceCache(budget: number) {
  let held: { key: string; chars: number; version: number }[] = [];
  const size = () => held.reduce((sum, entry) => sum + entry.chars, 0);
  return {
    get(key: string) {
      const entry = held.find((e) => e.key === key);
      if (entry) held = [...held.filter((e) => e !== entry), entry];
      return entry?.version;
    },
    set(key: string, chars: number, version: number) {
      held = held.filter((e) => e.key !== key);
      if (chars > budget) return;
      while (held.length > 0 && size() + chars > budget) held = held.slice(1);
      held.push({ key, chars, version });
    },
    forget(key: string) {
      held = held.filter((e) => e.key !== key);
    },
    keys: () => held.map((e) => e.key),
  };
}

describe('the window cache', () => {
  it('keeps exactly the windows a plain least-recently-used list of the same budget keeps', () => {
    const operation = fc.oneof(
      fc.record({ op: fc.constant('get' as const), session: fc.nat(7) }),
      fc.record({
        op: fc.constant('set' as const),
        session: fc.nat(7),
        chars: fc.integer({ min: 1, max: 60 }),
      }),
      fc.record({ op: fc.constant('forget' as const), session: fc.nat(7) }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 200 }), (operations) => {
        const budget = 100;
        const cache = createWindowCache<ReturnType<typeof sized>>(budget);
        const reference = referenceCache(budget);
        operations.forEach((step, version) => {
          const hash = `s${step.session}`;
          if (step.op === 'get') {
            expect(cache.get(KEY, hash)?.version).toBe(reference.get(hash));
          } else if (step.op === 'set') {
            const state = sized(hash, step.chars, version);
            cache.set(KEY, state);
            reference.set(hash, bytesOf(state), version);
          } else {
            cache.forget(KEY, hash);
            reference.forget(hash);
          }
        });
        // Every session the reference keeps is kept with its latest window, and no other.
        for (let session = 0; session < 8; session++) {
          const hash = `s${session}`;
          expect(cache.get(KEY, hash)?.version).toBe(reference.get(hash));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('never keeps a window larger than the whole cache', () => {
    const cache = createWindowCache<ReturnType<typeof sized>>(99);
    cache.set(KEY, sized('big', 100, 1));
    expect(cache.get(KEY, 'big')).toBeUndefined();
  });

  it('is empty after clear, and takes windows again', () => {
    const cache = createWindowCache<ReturnType<typeof sized>>(100);
    for (let s = 0; s < 5; s++) cache.set(KEY, sized(`s${s}`, 10, s));
    cache.clear();
    for (let s = 0; s < 5; s++) expect(cache.get(KEY, `s${s}`)).toBeUndefined();
    cache.set(KEY, sized('s0', 10, 7));
    expect(cache.get(KEY, 's0')?.version).toBe(7);
  });
});

/** A window of `chars` characters, told apart by `version`. */
function sized(hash: string, chars: number, version: number) {
  const entry: [string, string, 'de', number] = ['m'.repeat(chars), '', 'de', version];
  return { hash, version, entries: [entry] };
}

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

describe('the windows a session service keeps', () => {
  it("spare a session's next turn its window's read, until another instance writes the session", async () => {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    const store = await createStore(loadConfig(database.env).database);
    cleanup.push(() => store.close());
    await createKeysRepository(store.db).create(
      { id: 'key_1', name: 'k', plan: 'standard', active: true, hash: 'h', displayPrefix: 'p' },
      0,
    );
    const repository = createSessionsRepository(store.db, store.features);
    const reads = { windows: 0 };
    // A window read is a row read with its window (findUnless leaves out a current one).
    const counted = async (read: Promise<SessionRow | undefined>) => {
      const row = await read;
      if (row?.sealedWindow != null) reads.windows++;
      return row;
    };
    const counting: SessionsRepository = Object.assign({}, repository, {
      find: (keyId: string, hash: string) => counted(repository.find(keyId, hash)),
      findUnless: (...args: Parameters<SessionsRepository['findUnless']>) =>
        counted(repository.findUnless(...args)),
    });
    const sealer = createTurnSealer(randomBytes(32));
    const options = { window: 20, ttlMs: 60_000, maxBytes: 1_048_576 };
    const sessions = createSessionService(counting, sealer, options);
    const turn = (message: string) => ({
      message,
      reply: `re ${message}`,
      language: 'de' as const,
    });

    await (await sessions.open('key_1', 's', 1000)).record(turn('eins'), 1000);
    reads.windows = 0;
    await (await sessions.open('key_1', 's', 2000)).record(turn('zwei'), 2000);
    expect((await sessions.open('key_1', 's', 3000)).history).toEqual([turn('eins'), turn('zwei')]);
    expect(reads.windows).toBe(0);

    const other = createSessionService(repository, sealer, options);
    await (await other.open('key_1', 's', 4000)).record(turn('drei'), 4000);
    const opened = await sessions.open('key_1', 's', 5000);
    expect(opened.history.map((t) => t.message)).toEqual(['eins', 'zwei', 'drei']);
    expect(reads.windows).toBe(1);
  });
});
