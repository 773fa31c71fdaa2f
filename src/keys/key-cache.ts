/**
 * @module keys/key-cache
 * Authenticated keys remembered by their secret's hash, so that a request does not read its
 * key from the database every time. The rules (docs/contract.md, "Keys") allow a cached lookup to see a
 * revocation, rotation or plan change made elsewhere "within one second"; this cache does
 * better where the database can say cheaply that someone else wrote to it:
 *
 * - changes made through this process (the admin API, MCP) forget every entry at once;
 * - on SQLite, a change committed by another process (the CLI, another instance) is seen
 *   within 5 ms: `changes()` (SQLite's `data_version`, read at most every 5 ms) moves, and
 *   every entry read before it is read again;
 * - on PostgreSQL, which cannot tell, an entry is used for at most `ttlMs` (one second).
 *
 * A secret in its rotation grace is never used past its expiry: that instant is kept with
 * the entry and checked on every request, with the service's clock.
 * Unknown keys are not remembered: a key created elsewhere works at once.
 */
import type { FoundKey, KeyAuthRecord } from '../storage/repositories/keys-repository.js';

export interface KeyCacheOptions {
  /** How long an entry is used at most (monotonic milliseconds); 0 turns the cache off. */
  readonly ttlMs: number;
  /** Entries kept at most; the oldest go first. */
  readonly maxEntries: number;
  /** A number that changes when another connection commits to the database, if known. */
  readonly changes?: () => number;
  /** Monotonic milliseconds (performance.now), not the service clock: TTLs are real time. */
  readonly monotonic?: () => number;
}

export const DEFAULT_KEY_CACHE: KeyCacheOptions = { ttlMs: 1000, maxEntries: 10_000 };

interface Entry {
  readonly found: FoundKey;
  readonly readAt: number;
  readonly version: number | undefined;
}

export interface KeyCache {
  /**
   * The key with this secret hash at `now` (service clock), from the cache when it may be
   * used, else from `read`.
   */
  lookup(
    hash: string,
    now: number,
    read: () => Promise<FoundKey | undefined>,
  ): Promise<KeyAuthRecord | undefined>;
  /** Forgets every entry: call after any change to keys made through this process. */
  clear(): void;
}

export function createKeyCache(options: KeyCacheOptions = DEFAULT_KEY_CACHE): KeyCache {
  const { ttlMs, maxEntries, changes } = options;
  const monotonic = options.monotonic ?? (() => performance.now());
  const entries = new Map<string, Entry>();
  // Bumped by clear(): a lookup that began before a change must not store what it read.
  let generation = 0;

  const usable = (entry: Entry, now: number, at: number) =>
    at - entry.readAt < ttlMs &&
    (entry.version === undefined || entry.version === changes?.()) &&
    (entry.found.secretExpiresAt === null || now < entry.found.secretExpiresAt);

  return {
    async lookup(hash, now, read) {
      if (ttlMs <= 0) return (await read())?.key;
      const at = monotonic();
      const cached = entries.get(hash);
      if (cached !== undefined && usable(cached, now, at)) return cached.found.key;
      // Taken before the read: a change committed while it runs makes the entry stale.
      const version = changes?.();
      const started = generation;
      const found = await read();
      if (found === undefined) {
        entries.delete(hash);
        return undefined;
      }
      if (started === generation) {
        entries.delete(hash);
        if (entries.size >= maxEntries) {
          const oldest = entries.keys().next();
          if (!oldest.done) entries.delete(oldest.value);
        }
        entries.set(hash, { found, readAt: at, version });
      }
      return found.key;
    },
    clear() {
      generation++;
      entries.clear();
    },
  };
}
