/**
 * @module storage/repositories/session-expiry
 * When a session has expired (docs/contract.md, "Sessions"): it was idle longer than the
 * TTL. Stated once for JavaScript and once for SQL; the session service and the sessions
 * repository use nothing else.
 */
import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../schema.js';

/** The moment a session must have been active since not to be expired: now minus the TTL. */
export function activeSince(nowMs: number, ttlMs: number): number {
  return nowMs - ttlMs;
}

/** Whether a session last active at `lastActiveAt` has expired by `since` (`activeSince`). */
export function isExpired(lastActiveAt: number, since: number): boolean {
  return lastActiveAt < since;
}

/** `isExpired` in SQL, on the `sessions` row being read or written. */
export function expiredSql(eb: ExpressionBuilder<Database, 'sessions'>, since: number) {
  return eb('last_active_at', '<', since);
}
