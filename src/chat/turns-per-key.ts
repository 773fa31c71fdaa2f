/**
 * @module chat/turns-per-key
 * How many turns of each key run on this instance, so that one key cannot hold every
 * upstream connection (README, "Concurrent turns per key"). A count per key id, kept only
 * while the key has turns running.
 */
export class TurnsPerKey {
  private readonly running = new Map<string, number>();

  /** Takes a place for a turn of `keyId`; false when `max` of its turns already run. */
  take(keyId: string, max: number): boolean {
    const count = this.running.get(keyId) ?? 0;
    if (count >= max) return false;
    this.running.set(keyId, count + 1);
    return true;
  }

  /** Gives back a place taken by `take`. */
  release(keyId: string): void {
    const count = this.running.get(keyId) ?? 0;
    if (count <= 1) this.running.delete(keyId);
    else this.running.set(keyId, count - 1);
  }
}
