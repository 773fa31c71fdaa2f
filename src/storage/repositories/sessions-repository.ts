/**
 * @module storage/repositories/sessions-repository
 * Sessions and their sealed turns, always addressed by (key id, session hash): there is
 * no query that reaches a session without the key id it belongs to.
 */
import type { Kysely } from 'kysely';
import { prepareQuery } from '../prepared-query.js';
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

type SessionRef = { keyId: string; hash: string };

export function createSessionsRepository(db: Kysely<Database>): SessionsRepository {
  const recentQuery = prepareQuery<
    SessionRef & { activeSince: number; limit: number },
    { seq: number; language: string; created_at: number; sealed: string }
  >((p) =>
    db
      .selectFrom('turns as t')
      .innerJoin('sessions as s', (join) =>
        join.onRef('s.key_id', '=', 't.key_id').onRef('s.session_hash', '=', 't.session_hash'),
      )
      .select(['t.seq', 't.language', 't.created_at', 't.sealed'])
      .where('t.key_id', '=', p<string>('keyId'))
      .where('t.session_hash', '=', p<string>('hash'))
      .where('s.last_active_at', '>=', p<number>('activeSince'))
      .orderBy('t.seq', 'desc')
      .limit(p<number>('limit')),
  );
  const expireQuery = prepareQuery<SessionRef & { activeSince: number }, unknown>((p) =>
    db
      .deleteFrom('sessions')
      .where('key_id', '=', p<string>('keyId'))
      .where('session_hash', '=', p<string>('hash'))
      .where('last_active_at', '<', p<number>('activeSince')),
  );
  const touchQuery = prepareQuery<SessionRef & { now: number }, { turn_count: number }>((p) =>
    db
      .insertInto('sessions')
      .values({
        key_id: p<string>('keyId'),
        session_hash: p<string>('hash'),
        created_at: p<number>('now'),
        last_active_at: p<number>('now'),
        turn_count: 1,
      })
      .onConflict((oc) =>
        oc.columns(['key_id', 'session_hash']).doUpdateSet((eb) => ({
          turn_count: eb('sessions.turn_count', '+', 1),
          last_active_at: p<number>('now'),
        })),
      )
      .returning('turn_count'),
  );
  const insertTurnQuery = prepareQuery<
    SessionRef & { seq: number; language: string; now: number; sealed: string },
    unknown
  >((p) =>
    db.insertInto('turns').values({
      key_id: p<string>('keyId'),
      session_hash: p<string>('hash'),
      seq: p<number>('seq'),
      language: p<string>('language'),
      created_at: p<number>('now'),
      sealed: p<string>('sealed'),
    }),
  );
  const pruneQuery = prepareQuery<SessionRef & { oldestKept: number }, unknown>((p) =>
    db
      .deleteFrom('turns')
      .where('key_id', '=', p<string>('keyId'))
      .where('session_hash', '=', p<string>('hash'))
      .where('seq', '<', p<number>('oldestKept')),
  );

  return {
    async recentTurns(keyId, hash, limit, activeSince) {
      if (limit <= 0) return [];
      const { rows } = await recentQuery(db, { keyId, hash, activeSince, limit });
      return rows.reverse().map((r) => ({
        seq: Number(r.seq),
        language: r.language,
        createdAt: Number(r.created_at),
        sealed: r.sealed,
      }));
    },

    async append(keyId, hash, turn, keep, now, activeSince) {
      await db.transaction().execute(async (trx) => {
        await expireQuery(trx, { keyId, hash, activeSince });
        const session = (await touchQuery(trx, { keyId, hash, now })).rows[0];
        const seq = Number(session?.turn_count);
        await insertTurnQuery(trx, {
          keyId,
          hash,
          seq,
          language: turn.language,
          now,
          sealed: turn.seal(seq),
        });
        await pruneQuery(trx, { keyId, hash, oldestKept: seq - keep + 1 });
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
