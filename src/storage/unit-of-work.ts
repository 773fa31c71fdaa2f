/**
 * @module storage/unit-of-work
 * Writes that commit together: a change and what must exist exactly when it does (the
 * events it causes, the idempotent outcome a turn answers, the unit a claim holds). A
 * domain module passes them from one repository to another as `Writes`, which only a
 * repository can fill, and the storage operation they are handed to commits them in its
 * own transaction. No statement crosses a domain module.
 */
import type { BoundQuery } from './prepared-query.js';

/** The writes of one transaction, gathered while it runs; opaque outside storage. */
export class UnitOfWork {
  readonly #writes: BoundQuery[] = [];

  /** Adds a repository's write. */
  static add(work: UnitOfWork, write: BoundQuery): void {
    work.#writes.push(write);
  }

  /**
   * Adds a write that must change a row for the unit to commit: when it changes none, the
   * whole transaction rolls back (see `BoundQuery.guard`).
   */
  static require(work: UnitOfWork, write: BoundQuery): void {
    work.#writes.push(Object.assign({ guard: true }, write));
  }

  /** The writes `writes` adds, in order, for the transaction that commits them. */
  static gather(...writes: readonly (Writes | undefined)[]): readonly BoundQuery[] {
    const work = new UnitOfWork();
    for (const write of writes) write?.(work);
    return work.#writes;
  }
}

/** Adds writes to a unit of work (a repository's, or several of them in turn). */
export type Writes = (work: UnitOfWork) => void;
