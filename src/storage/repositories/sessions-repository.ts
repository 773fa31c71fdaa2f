/**
 * @module storage/repositories/sessions-repository
 * Sessions and their sealed memory windows, always addressed by (key id, session hash):
 * there is no query that reaches a session without the key id it belongs to.
 */
import type { Kysely } from 'kysely';
import { prepareQuery } from '../prepared-query.js';
import type { Database } from '../schema.js';

export interface SessionRow {
  /** Writes of the window so far; the next write must name it (optimistic concurrency). */
  readonly turnCount: number;
  readonly lastActiveAt: number;
  /** Null for a session stored before migration 002 (its turns are in `turns`). */
  readonly sealedWindow: string | null;
}

export interface LegacyTurn {
  readonly seq: number;
  readonly language: string;
  readonly createdAt: number;
  readonly sealed: string;
}

export interface WindowWrite {
  /** The `turnCount` the window was built from; the write fails if it changed since. */
  readonly expectedCount: number;
  readonly sealedWindow: string;
  readonly now: number;
  /** A session idle since before this is expired: its window starts afresh. */
  readonly activeSince: number;
}

export interface SessionsRepository {
  find(keyId: string, sessionHash: string): Promise<SessionRow | undefined>;
  /** Stores the window if nobody wrote it since it was read; false on such a conflict. */
  writeWindow(keyId: string, sessionHash: string, write: WindowWrite): Promise<boolean>;
  /** The newest `limit` turns of a session from before migration 002, oldest first. */
  legacyTurns(keyId: string, sessionHash: string, limit: number): Promise<LegacyTurn[]>;
  /** Removes turns from before migration 002 once they live in the window. */
  dropLegacyTurns(keyId: string, sessionHash: string): Promise<void>;
  /** Deletes a session; false when there was no live one. */
  delete(keyId: string, sessionHash: string, activeSince: number): Promise<boolean>;
  /** Deletes sessions idle since before `idleBefore`; returns how many. */
  sweep(idleBefore: number): Promise<number>;
}

type SessionRef = { keyId: string; hash: string };

export function createSessionsRepository(db: Kysely<Database>): SessionsRepository {
  const findQuery = prepareQuery<
    SessionRef,
    { turn_count: number; last_active_at: number; sealed_window: string | null }
  >((p) =>
    db
      .selectFrom('sessions')
      .select(['turn_count', 'last_active_at', 'sealed_window'])
      .where('key_id', '=', p<string>('keyId'))
      .where('session_hash', '=', p<string>('hash')),
  );
  // One statement: a new session is inserted; an existing one is updated only if its
  // count is still the one the window was built from, so concurrent turns never overwrite
  // each other (the loser re-reads and tries again).
  const writeQuery = prepareQuery<
    SessionRef & {
      count: number;
      expected: number;
      sealed: string;
      now: number;
      activeSince: number;
    },
    { turn_count: number }
  >((p) =>
    db
      .insertInto('sessions')
      .values({
        key_id: p<string>('keyId'),
        session_hash: p<string>('hash'),
        created_at: p<number>('now'),
        last_active_at: p<number>('now'),
        turn_count: p<number>('count'),
        sealed_window: p<string>('sealed'),
      })
      .onConflict((oc) =>
        oc
          .columns(['key_id', 'session_hash'])
          .doUpdateSet((eb) => ({
            turn_count: eb.ref('excluded.turn_count'),
            last_active_at: eb.ref('excluded.last_active_at'),
            sealed_window: eb.ref('excluded.sealed_window'),
            // An expired session that starts afresh is a new conversation.
            created_at: eb
              .case()
              .when('sessions.last_active_at', '<', p<number>('activeSince'))
              .then(eb.ref('excluded.created_at'))
              .else(eb.ref('sessions.created_at'))
              .end(),
          }))
          .where('sessions.turn_count', '=', p<number>('expected')),
      )
      .returning('turn_count'),
  );

  return {
    async find(keyId, hash) {
      const row = (await findQuery(db, { keyId, hash })).rows[0];
      return (
        row && {
          turnCount: Number(row.turn_count),
          lastActiveAt: Number(row.last_active_at),
          sealedWindow: row.sealed_window,
        }
      );
    },

    async writeWindow(keyId, hash, write) {
      const { rows } = await writeQuery(db, {
        keyId,
        hash,
        count: write.expectedCount + 1,
        expected: write.expectedCount,
        sealed: write.sealedWindow,
        now: write.now,
        activeSince: write.activeSince,
      });
      return rows.length === 1;
    },

    async legacyTurns(keyId, hash, limit) {
      if (limit <= 0) return [];
      const rows = await db
        .selectFrom('turns')
        .select(['seq', 'language', 'created_at', 'sealed'])
        .where('key_id', '=', keyId)
        .where('session_hash', '=', hash)
        .orderBy('seq', 'desc')
        .limit(limit)
        .execute();
      return rows.reverse().map((r) => ({
        seq: Number(r.seq),
        language: r.language,
        createdAt: Number(r.created_at),
        sealed: r.sealed,
      }));
    },

    async dropLegacyTurns(keyId, hash) {
      await db
        .deleteFrom('turns')
        .where('key_id', '=', keyId)
        .where('session_hash', '=', hash)
        .execute();
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
