/**
 * @module core/builtin/text/bounded-cache
 * A map of at most `limit` entries that forgets its oldest entry when full. Caches of
 * resolved words must not grow with user input, and forgetting one entry at a time keeps
 * the common words cached instead of dropping everything at once (which made every
 * request after a full cache slow again).
 */
export class BoundedCache<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly limit: number) {}

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  set(key: K, value: V): void {
    if (this.map.size >= this.limit && !this.map.has(key)) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
    this.map.set(key, value);
  }
}
