/**
 * @module storage/sqlite/direct-runner
 * Runs the hot path's prepared queries straight on the better-sqlite3 connection, without
 * Kysely's connection hand-over, which costs more than the statements themselves.
 *
 * - Reads run at once.
 * - Writes are committed in groups: every write that arrives while the event loop handles
 *   one round of I/O is run in one `BEGIN IMMEDIATE … COMMIT` just after that round
 *   (`setImmediate`), and each caller's promise settles only once that commit succeeded.
 *   A commit costs more than the small statement in it, so under load this saves most of
 *   it; a lone request waits for one turn of the event loop. Durability is unchanged:
 *   nothing is answered before its write is committed.
 * - A write that fails on its own (a constraint) fails alone; its group goes on. Anything
 *   else (disk full, I/O error, the lock not granted within the busy timeout) rolls the
 *   group back and fails every write in it, so none of them counts.
 *
 * better-sqlite3 is synchronous: a statement or a group runs atomically towards everything
 * else in the process, as if it had waited for Kysely's lock. Neither may run inside a
 * transaction that another task opened through Kysely and is waiting in: then a read goes
 * through Kysely (which waits for that transaction), and a group waits for it to end.
 */
import type SqliteDatabase from 'better-sqlite3';
import type { QueryResult } from 'kysely';
import type { DirectRunner } from '../prepared-query.js';

interface PendingWrite {
  readonly statement: SqliteDatabase.Statement;
  readonly parameters: readonly unknown[];
  resolve(result: QueryResult<unknown>): void;
  reject(error: unknown): void;
}

/** How long a group waits before looking again whether a foreign transaction ended. */
const FOREIGN_TRANSACTION_POLL_MS = 1;

export function createDirectRunner(sqlite: SqliteDatabase.Database): DirectRunner {
  let group: PendingWrite[] = [];
  let scheduled = false;

  const flush = () => {
    if (sqlite.open && sqlite.inTransaction) {
      setTimeout(flush, FOREIGN_TRANSACTION_POLL_MS);
      return;
    }
    scheduled = false;
    const writes = group;
    group = [];
    commitGroup(sqlite, writes);
  };

  return (sql, parameters) => {
    if (sqlite.inTransaction) return undefined;
    const statement = sqlite.prepare(sql);
    if (statement.readonly) return { rows: statement.all(parameters) };
    return new Promise((resolve, reject) => {
      group.push({ statement, parameters, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });
  };
}

function commitGroup(sqlite: SqliteDatabase.Database, writes: PendingWrite[]): void {
  const [only] = writes;
  if (writes.length === 1 && only) {
    // One statement commits on its own: no need for an explicit transaction.
    try {
      only.resolve(execute(only));
    } catch (error) {
      only.reject(error);
    }
    return;
  }
  const outcomes: Array<
    { ok: true; result: QueryResult<unknown> } | { ok: false; error: unknown }
  > = [];
  try {
    if (!sqlite.open) throw new Error('The database connection is not open');
    sqlite.prepare('begin immediate').run();
    for (const write of writes) {
      try {
        outcomes.push({ ok: true, result: execute(write) });
      } catch (error) {
        // SQLite undoes just the failed statement for a constraint; for anything else it
        // may have undone the whole transaction, so the group fails as one.
        if (!isConstraint(error) || !sqlite.inTransaction) throw error;
        outcomes.push({ ok: false, error });
      }
    }
    sqlite.prepare('commit').run();
  } catch (error) {
    if (sqlite.open && sqlite.inTransaction) sqlite.prepare('rollback').run();
    for (const write of writes) write.reject(error);
    return;
  }
  writes.forEach((write, i) => {
    const outcome = outcomes[i];
    if (outcome?.ok) write.resolve(outcome.result);
    else write.reject(outcome?.error);
  });
}

/** Results have the shape of Kysely's SQLite driver. */
function execute({ statement, parameters }: PendingWrite): QueryResult<unknown> {
  if (statement.reader) return { rows: statement.all(parameters) };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) };
}

function isConstraint(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_CONSTRAINT');
}
