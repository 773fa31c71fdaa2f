/**
 * @module storage/repositories/sessions-repository
 * Sessions and their sealed turns, always addressed by (key id, session hash): there is
 * no query that reaches a session without the key id it belongs to.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface StoredTurn {
  readonly seq: number;
  readonly language: string;
  readonly createdAt: number;
  readonly sealed: string;
}

export interface NewTurn {
  readonly language: string;
  /** Seals the turn for its position (the seq is part of the binding). */
  readonly seal: (seq: number) => string;
}

export interface SessionsRepository {
  /** The newest `limit` turns, oldest first, of a session active since `activeSince`. */
  recentTurns(
    keyId: string,
    sessionHash: string,
    limit: number,
    activeSince: number,
  ): Promise<StoredTurn[]>;
  /**
   * Appends a turn and keeps only the newest `keep` turns. A session idle since before
   * `activeSince` is expired: it starts afresh instead of being revived.
   */
  append(
    keyId: string,
    sessionHash: string,
    turn: NewTurn,
    keep: number,
    now: number,
    activeSince: number,
  ): Promise<void>;
  /** Deletes a session; false when there was no live one. */
  delete(keyId: string, sessionHash: string, activeSince: number): Promise<boolean>;
  /** Deletes sessions idle since before `idleBefore`; returns how many. */
  sweep(idleBefore: number): Promise<number>;
}

export function createSessionsRepository(db: Kysely<Database>): SessionsRepository {
  return {
    async recentTurns(keyId, sessionHash, limit, activeSince) {
      if (limit <= 0) return [];
      const rows = await db
        .selectFrom('turns as t')
        .innerJoin('sessions as s', (join) =>
          join.onRef('s.key_id', '=', 't.key_id').onRef('s.session_hash', '=', 't.session_hash'),
        )
        .select(['t.seq', 't.language', 't.created_at', 't.sealed'])
        .where('t.key_id', '=', keyId)
        .where('t.session_hash', '=', sessionHash)
        .where('s.last_active_at', '>=', activeSince)
        .orderBy('t.seq', 'desc')
        .limit(limit)
        .execute();
      return rows.reverse().map((r) => ({
        seq: Number(r.seq),
        language: r.language,
        createdAt: Number(r.created_at),
        sealed: r.sealed,
      }));
    },

    async append(keyId, sessionHash, turn, keep, now, activeSince) {
      await db.transaction().execute(async (trx) => {
        await trx
          .deleteFrom('sessions')
          .where('key_id', '=', keyId)
          .where('session_hash', '=', sessionHash)
          .where('last_active_at', '<', activeSince)
          .execute();
        const session = await trx
          .insertInto('sessions')
          .values({
            key_id: keyId,
            session_hash: sessionHash,
            created_at: now,
            last_active_at: now,
            turn_count: 1,
          })
          .onConflict((oc) =>
            oc.columns(['key_id', 'session_hash']).doUpdateSet((eb) => ({
              turn_count: eb('sessions.turn_count', '+', 1),
              last_active_at: now,
            })),
          )
          .returning('turn_count')
          .executeTakeFirstOrThrow();
        const seq = Number(session.turn_count);
        await trx
          .insertInto('turns')
          .values({
            key_id: keyId,
            session_hash: sessionHash,
            seq,
            language: turn.language,
            created_at: now,
            sealed: turn.seal(seq),
          })
          .execute();
        await trx
          .deleteFrom('turns')
          .where('key_id', '=', keyId)
          .where('session_hash', '=', sessionHash)
          .where('seq', '<=', seq - keep)
          .execute();
      });
    },

    async delete(keyId, sessionHash, activeSince) {
      const row = await db
        .deleteFrom('sessions')
        .where('key_id', '=', keyId)
        .where('session_hash', '=', sessionHash)
        .returning('last_active_at')
        .executeTakeFirst();
      return row !== undefined && Number(row.last_active_at) >= activeSince;
    },

    async sweep(idleBefore) {
      const result = await db
        .deleteFrom('sessions')
        .where('last_active_at', '<', idleBefore)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
