/**
 * @module core/http/circuit-breaker
 * One upstream's circuit breaker (docs/core.md, "Several upstreams"): after `failures`
 * consecutive failed attempts it opens for `cooldownMs`, then lets one probe through; the
 * probe's success closes it, its failure opens it again for another cooldown. The clock is
 * an input, so tests move time instead of waiting for it.
 */

export interface BreakerSettings {
  /** Consecutive failed attempts that open the breaker. */
  readonly failures: number;
  /** How long it stays open before one probe may go. */
  readonly cooldownMs: number;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

/** A class, not an object literal: see test/house/object-literals.test.ts. */
export class CircuitBreaker {
  private consecutive = 0;
  private openedAt: number | undefined;
  /** A probe is under way: nothing else passes until it ends. */
  private probing = false;

  constructor(
    private readonly settings: BreakerSettings,
    private readonly now: () => number,
  ) {}

  get state(): BreakerState {
    if (this.openedAt === undefined) return 'closed';
    return this.probing || this.now() >= this.openedAt + this.settings.cooldownMs
      ? 'half_open'
      : 'open';
  }

  /** Whether an attempt could start now (nothing is taken). */
  allows(): boolean {
    if (this.openedAt === undefined) return true;
    return !this.probing && this.now() >= this.openedAt + this.settings.cooldownMs;
  }

  /** Takes the way for one attempt: false when the breaker is open (or its probe is out). */
  acquire(): boolean {
    if (!this.allows()) return false;
    if (this.openedAt !== undefined) this.probing = true;
    return true;
  }

  /** Milliseconds until a probe may go; 0 when an attempt could start now. */
  waitMs(): number {
    if (this.openedAt === undefined) return 0;
    return Math.max(0, this.openedAt + this.settings.cooldownMs - this.now());
  }

  /** The attempt got an answer from the upstream: the breaker closes. */
  succeeded(): void {
    this.consecutive = 0;
    this.openedAt = undefined;
    this.probing = false;
  }

  /** The attempt failed on the upstream's side (connection, 5xx, 429, a timeout). */
  failed(): void {
    this.consecutive++;
    if (this.probing || this.consecutive >= this.settings.failures) {
      this.openedAt = this.now();
    }
    this.probing = false;
  }

  /** The attempt ended saying nothing about the upstream (the caller left, a bad request). */
  released(): void {
    this.probing = false;
  }
}
