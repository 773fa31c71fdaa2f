/**
 * @module storage/sqlite/direct-runner
 * Runs the hot path's prepared queries straight on the better-sqlite3 connection, without
 * Kysely's connection hand-over, which costs more than the statements themselves.
 *
 * - A read runs at once, unless a group is waiting to commit: then it joins that group (a
 *   turn's session read joins the reservation made right after it), because inside the
 *   group's transaction it needs no read transaction of its own; it sees the writes queued
 *   before it. A read needs no write lock: if the group fails, it is answered on its own.
 * - Writes are committed in groups: every write that arrives while the event loop handles
 *   one round of I/O is run in one `BEGIN IMMEDIATE … COMMIT` just after that round
 *   (`setImmediate`), and each caller's promise settles only once that commit succeeded.
 *   A commit costs more than the small statement in it, so under load this saves most of
 *   it; a lone request waits for one turn of the event loop. Durability is unchanged:
 *   nothing is answered before its write is committed.
 * - A read-modify-write (`runAtomically`) joins the group as one job: its read, the
 *   statements built from what it read, all synchronously inside the group's transaction
 *   (under a savepoint), so nothing gets in between, in this process or another.
 * - A write that fails on its own (a constraint) fails alone; its group goes on. Anything
 *   else (disk full, I/O error, the lock not granted within the busy timeout) rolls the
 *   group back and fails every write in it, so none of them counts.
 *
 * better-sqlite3 is synchronous: a statement or a group runs atomically towards everything
 * else in the process, as if it had waited for Kysely's lock. Neither may run inside a
 * transaction that another task opened through Kysely and is waiting in: then a read goes
 * through Kysely (which waits for that transaction), and a group waits for it to end.
 */
import SqliteDatabase from 'better-sqlite3';
import type { QueryResult } from 'kysely';
import { type BoundQuery, type DirectRunner, GuardFailed } from '../prepared-query.js';

const { SqliteError } = SqliteDatabase;

/** One caller's part of a group: a statement, a read-modify-write job, or a read. */
interface Pending {
  /** Runs inside the group's transaction; throws to fail this caller. */
  run(): unknown;
  /** True when `run` is several statements that a savepoint must undo together. */
  readonly compound: boolean;
  /** True for a read, which needs no write lock: a group that fails answers it on its own. */
  readonly read: boolean;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

/** How long a group waits before looking again whether a foreign transaction ended. */
const FOREIGN_TRANSACTION_POLL_MS = 1;

/** Prepares (or hands back an already prepared) statement; see `open-sqlite.ts`. */
export type Prepare = (sql: string) => SqliteDatabase.Statement;

export function createDirectRunner(
  sqlite: SqliteDatabase.Database,
  prepare: Prepare = (sql) => sqlite.prepare(sql),
): DirectRunner {
  let group: Pending[] = [];
  let scheduled = false;

  const flush = () => {
    if (sqlite.open && sqlite.inTransaction) {
      setTimeout(flush, FOREIGN_TRANSACTION_POLL_MS);
      return;
    }
    scheduled = false;
    const writes = group;
    group = [];
    commitGroup(sqlite, prepare, writes);
  };

  const join = (write: Pending) => {
    group.push(write);
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const enqueue = (run: () => unknown, compound: boolean, read = false) =>
    new Promise<unknown>((resolve, reject) => join({ run, compound, read, resolve, reject }));

  const runner = (sql: string, parameters: readonly unknown[]) => {
    if (sqlite.inTransaction) return undefined;
    const statement = prepare(sql);
    if (statement.readonly) {
      if (!scheduled) return { rows: statement.all(parameters) };
      return enqueue(() => ({ rows: statement.all(parameters) }), false, true) as Promise<
        QueryResult<unknown>
      >;
    }
    return enqueue(() => execute(statement, parameters), false) as Promise<QueryResult<unknown>>;
  };
  const atomically = (
    read: BoundQuery,
    then: (rows: readonly unknown[]) => readonly BoundQuery[],
  ) => {
    if (sqlite.inTransaction) return undefined;
    const job = () => {
      const rows = prepare(read.sql).all(read.parameters);
      for (const write of then(rows)) {
        const { changes } = prepare(write.sql).run(write.parameters);
        // Thrown by the job's own code: only its savepoint is undone (see failsAlone).
        if (write.guard && changes === 0) throw new GuardFailed();
      }
      return rows;
    };
    return enqueue(job, true) as Promise<readonly unknown[]>;
  };
  return Object.assign(runner, { atomically });
}

function commitGroup(sqlite: SqliteDatabase.Database, prepare: Prepare, writes: Pending[]): void {
  const [only] = writes;
  if (writes.length === 1 && only && !only.compound) {
    // One statement commits on its own: no need for an explicit transaction.
    answerAlone(only);
    return;
  }
  const outcomes: Array<{ ok: true; result: unknown } | { ok: false; error: unknown }> = [];
  // A job alone in its group (reads aside) needs no savepoint: if it fails, the group's
  // rollback undoes exactly it (two statements fewer for every reservation a lone request
  // makes), and the reads are answered on their own.
  let changing = 0;
  for (const write of writes) if (!write.read) changing += 1;
  const alone = changing === 1;
  try {
    if (!sqlite.open) throw new Error('The database connection is not open');
    prepare('begin immediate').run();
    for (const write of writes) {
      if (alone) {
        outcomes.push({ ok: true, result: write.run() });
        continue;
      }
      try {
        outcomes.push({ ok: true, result: runOne(sqlite, prepare, write) });
      } catch (error) {
        // SQLite undoes just the failed statement (or the job's savepoint) for a
        // constraint or a job's own error; for anything else it may have undone the whole
        // transaction, so the group fails as one.
        if (!failsAlone(error) || !sqlite.inTransaction) throw error;
        outcomes.push({ ok: false, error });
      }
    }
    prepare('commit').run();
  } catch (error) {
    if (sqlite.open && sqlite.inTransaction) prepare('rollback').run();
    for (const write of writes) {
      if (write.read) answerAlone(write);
      else write.reject(error);
    }
    return;
  }
  writes.forEach((write, i) => {
    const outcome = outcomes[i];
    if (outcome?.ok) write.resolve(outcome.result);
    else write.reject(outcome?.error);
  });
}

function answerAlone(pending: Pending): void {
  try {
    pending.resolve(pending.run());
  } catch (error) {
    pending.reject(error);
  }
}

/** A job of several statements runs under a savepoint, so that it fails as a whole. */
function runOne(sqlite: SqliteDatabase.Database, prepare: Prepare, write: Pending): unknown {
  if (!write.compound) return write.run();
  prepare('savepoint job').run();
  try {
    const result = write.run();
    prepare('release job').run();
    return result;
  } catch (error) {
    if (sqlite.inTransaction) {
      prepare('rollback to job').run();
      prepare('release job').run();
    }
    throw error;
  }
}

/** Results have the shape of Kysely's SQLite driver. */
function execute(
  statement: SqliteDatabase.Statement,
  parameters: readonly unknown[],
): QueryResult<unknown> {
  if (statement.reader) return { rows: statement.all(parameters) };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
}

/** A constraint, or an error thrown by a job's own code (not by SQLite), fails one caller. */
function failsAlone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code.startsWith('SQLITE_CONSTRAINT');
  return !(error instanceof SqliteError);
}
