/**
 * @module storage/repositories/sessions-repository
 * Sessions and their sealed memory windows, always addressed by (key id, session hash):
 * there is no query that reaches a session without the key id it belongs to.
 */
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { StoreFeatures } from '../dialect.js';
import { type Param, prepareQuery, queryTarget, runAtomically } from '../prepared-query.js';
import type { Database } from '../schema.js';
import { type StoredSealed, sealedColumn } from '../sealed-column.js';
import { UnitOfWork, type Writes } from '../unit-of-work.js';
import { expiredSql, isExpired } from './session-expiry.js';

/** What identifies a session's stored state without its window. */
export interface SessionHead {
  /** Turns ever appended; each write of the window increments it. */
  readonly turnCount: number;
  readonly lastActiveAt: number;
  /** When the conversation began (a deleted and recreated session has a new one). */
  readonly createdAt: number;
}

export interface SessionRow extends SessionHead {
  /**
   * The sealed window as stored (bytes or base64url text); null for a row the locked write
   * has just created (no turn yet).
   */
  readonly sealedWindow: StoredSealed | null;
}

interface TurnAppend {
  readonly now: number;
  /** A session idle since before this is expired: its window starts afresh. */
  readonly activeSince: number;
  /**
   * The sealed window after this turn, built from the session as it is now, under the
   * lock. Synchronous: nothing may be awaited while the session is locked.
   */
  build(current: SessionRow): Buffer;
  /** Other writes that must commit together with this turn (an idempotent outcome). */
  readonly with?: Writes;
}

interface WindowChange {
  readonly expectedCount: number;
  /**
   * When the conversation began, as the turn read it: a session deleted and begun again
   * since has another beginning, and its window is not the one the turn read.
   */
  readonly expectedCreatedAt: number;
  /** The window after this turn, sealed for count `expectedCount + 1`. */
  readonly sealed: Buffer;
  readonly now: number;
  /** A session idle since before this is expired: it starts afresh. */
  readonly activeSince: number;
}

export interface SessionsRepository {
  find(keyId: string, sessionHash: string): Promise<SessionRow | undefined>;
  /**
   * The session's row, its window left out (null) while the row is still at `copy`'s count
   * and beginning: one read tells whether a copy kept in memory is current and, when it is
   * not, brings the window.
   */
  findUnless(
    keyId: string,
    sessionHash: string,
    copy: Pick<SessionHead, 'turnCount' | 'createdAt'>,
  ): Promise<SessionRow | undefined>;
  /**
   * Appends a turn with one short read-modify-write: the session row is locked (created if
   * new), its window rebuilt by `append.build` and written, in one transaction. Concurrent appends wait for each other; none fails.
   * Returns the session's head after the write.
   */
  appendTurn(keyId: string, sessionHash: string, append: TurnAppend): Promise<SessionHead>;
  /**
   * Stores `sealed` as the window of a session still as it was read (`expectedCount` turns,
   * 0: no row yet), with one statement and no lock: true when it was, false when another
   * turn was stored since (then `appendTurn`, which waits for the lock, takes over).
   */
  replaceWindow(keyId: string, sessionHash: string, change: WindowChange): Promise<boolean>;
  /** Deletes a session; false when there was no live one. */
  delete(keyId: string, sessionHash: string, activeSince: number): Promise<boolean>;
  /** Deletes sessions idle since before `idleBefore`; returns how many. */
  sweep(idleBefore: number): Promise<number>;
}

type SessionRef = { keyId: string; hash: string };
/** The row a turn's write locks (see `PreparedQueryOptions`). */
const sessionLock = { lock: (p: SessionRef) => `sessions\0${p.keyId}\0${p.hash}` };
type StoredRow = {
  turn_count: number;
  last_active_at: number;
  created_at: number;
  sealed_window: StoredSealed | null;
};

export function createSessionsRepository(
  db: Kysely<Database>,
  features: StoreFeatures,
): SessionsRepository {
  const on = queryTarget(db, features);
  const stored = sealedColumn(features);
  const findQuery = prepareQuery<SessionRef, StoredRow>((p) =>
    db
      .selectFrom('sessions')
      .select(['turn_count', 'last_active_at', 'created_at', 'sealed_window'])
      .where('key_id', '=', p<string>('keyId'))
      .where('session_hash', '=', p<string>('hash')),
  );
  const findUnlessQuery = prepareQuery<
    SessionRef & { count: number; createdAt: number },
    StoredRow
  >((p) =>
    db
      .selectFrom('sessions')
      .select((eb) => [
        'turn_count',
        'last_active_at',
        'created_at',
        eb
          .case()
          .when(
            eb.and([
              eb('turn_count', '=', p<number>('count')),
              eb('created_at', '=', p<number>('createdAt')),
            ]),
          )
          .then(null)
          .else(eb.ref('sealed_window'))
          .end()
          .as('sealed_window'),
      ])
      .where('key_id', '=', p<string>('keyId'))
      .where('session_hash', '=', p<string>('hash')),
  );
  // Creates the row if the session is new, locks it either way (on PostgreSQL an upsert
  // locks the row it updates; on SQLite the transaction holds the write lock) and returns
  // it as it is now.
  const lockQuery = prepareQuery<SessionRef & { now: number }, StoredRow>((p) =>
    db
      .insertInto('sessions')
      .values({
        key_id: p<string>('keyId'),
        session_hash: p<string>('hash'),
        created_at: p<number>('now'),
        last_active_at: p<number>('now'),
        turn_count: 0,
        sealed_window: null,
      })
      .onConflict((oc) =>
        oc
          .columns(['key_id', 'session_hash'])
          .doUpdateSet((eb) => ({ turn_count: eb.ref('sessions.turn_count') })),
      )
      .returning(['turn_count', 'last_active_at', 'created_at', 'sealed_window']),
  );
  const writeQuery = prepareQuery<
    SessionRef & { count: number; sealed: StoredSealed; now: number; activeSince: number },
    unknown
  >((p) =>
    db
      .updateTable('sessions')
      .set((eb) => ({ turn_count: p<number>('count'), ...turnWritten(eb, p) }))
      .where('key_id', '=', p<string>('keyId'))
      .where('session_hash', '=', p<string>('hash')),
  );
  const insertFirstQuery = prepareQuery<
    SessionRef & { sealed: StoredSealed; now: number },
    unknown
  >(
    (p) =>
      db
        .insertInto('sessions')
        .values({
          key_id: p<string>('keyId'),
          session_hash: p<string>('hash'),
          created_at: p<number>('now'),
          last_active_at: p<number>('now'),
          turn_count: 1,
          sealed_window: p<StoredSealed>('sealed'),
        })
        .onConflict((oc) => oc.columns(['key_id', 'session_hash']).doNothing()),
    sessionLock,
  );
  const replaceIfUnchangedQuery = prepareQuery<
    SessionRef & {
      expected: number;
      expectedCreatedAt: number;
      sealed: StoredSealed;
      now: number;
      activeSince: number;
    },
    unknown
  >(
    (p) =>
      db
        .updateTable('sessions')
        .set((eb) => ({ turn_count: eb(eb.ref('turn_count'), '+', 1), ...turnWritten(eb, p) }))
        .where('key_id', '=', p<string>('keyId'))
        .where('session_hash', '=', p<string>('hash'))
        .where('turn_count', '=', p<number>('expected'))
        .where('created_at', '=', p<number>('expectedCreatedAt')),
    sessionLock,
  );

  return {
    async find(keyId, hash) {
      const row = (await findQuery(on, { keyId, hash })).rows[0];
      return row && toRow(row);
    },

    async findUnless(keyId, hash, copy) {
      const parameters = { keyId, hash, count: copy.turnCount, createdAt: copy.createdAt };
      const row = (await findUnlessQuery(on, parameters)).rows[0];
      return row && toRow(row);
    },

    async appendTurn(keyId, hash, append) {
      let after: SessionHead | undefined;
      await runAtomically(on, lockQuery.bind({ keyId, hash, now: append.now }), ([locked]) => {
        if (!locked) throw new Error('the session row was not returned by its upsert');
        const current = toRow(locked);
        const write = writeQuery.bind({
          keyId,
          hash,
          count: current.turnCount + 1,
          sealed: stored(append.build(current)),
          now: append.now,
          activeSince: append.activeSince,
        });
        after = {
          turnCount: current.turnCount + 1,
          lastActiveAt: append.now,
          // As the update's CASE: an expired session starts afresh.
          createdAt: isExpired(current.lastActiveAt, append.activeSince)
            ? append.now
            : current.createdAt,
        };
        return [write, ...UnitOfWork.gather(append.with)];
      });
      if (after === undefined) throw new Error('the session row was not written');
      return after;
    },

    async replaceWindow(keyId, hash, change) {
      const ref = { keyId, hash, sealed: stored(change.sealed), now: change.now };
      const result =
        change.expectedCount === 0
          ? await insertFirstQuery(on, ref)
          : await replaceIfUnchangedQuery(on, {
              expected: change.expectedCount,
              expectedCreatedAt: change.expectedCreatedAt,
              activeSince: change.activeSince,
              ...ref,
            });
      return Number(result.numAffectedRows ?? 0) === 1;
    },

    async delete(keyId, sessionHash, activeSince) {
      const row = await db
        .deleteFrom('sessions')
        .where('key_id', '=', keyId)
        .where('session_hash', '=', sessionHash)
        .returning('last_active_at')
        .executeTakeFirst();
      return row !== undefined && !isExpired(Number(row.last_active_at), activeSince);
    },

    async sweep(idleBefore) {
      const result = await db
        .deleteFrom('sessions')
        .where((eb) => expiredSql(eb, idleBefore))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

/** The columns every stored turn sets besides its count (parameters `now`, `sealed`, `activeSince`). */
function turnWritten(eb: ExpressionBuilder<Database, 'sessions'>, p: Param) {
  return {
    last_active_at: p<number>('now'),
    sealed_window: p<StoredSealed>('sealed'),
    // An expired session that starts afresh is a new conversation.
    created_at: eb
      .case()
      .when(expiredSql(eb, p<number>('activeSince')))
      .then(p<number>('now'))
      .else(eb.ref('created_at'))
      .end(),
  };
}

function toHead(row: Omit<StoredRow, 'sealed_window'>): SessionHead {
  return {
    turnCount: Number(row.turn_count),
    lastActiveAt: Number(row.last_active_at),
    createdAt: Number(row.created_at),
  };
}

function toRow(row: StoredRow): SessionRow {
  return Object.assign(toHead(row), { sealedWindow: row.sealed_window });
}
