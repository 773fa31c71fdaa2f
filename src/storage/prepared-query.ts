/**
 * @module storage/prepared-query
 * Building and compiling a Kysely query costs several times more than running it on
 * SQLite. Hot-path queries are therefore compiled once, with named placeholders, and
 * executed with fresh parameter values: same SQL, same dialect, no string building.
 *
 * A database may run prepared queries itself, outside any transaction (`DirectRunner`,
 * declared as `StoreFeatures.statements`): SQLite on its connection with group commit,
 * skipping Kysely's connection hand-over, which costs more than the statement itself;
 * PostgreSQL as named statements on pipelined connections. Elsewhere Kysely runs them.
 */
import { type Compilable, CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import type { StoreFeatures } from './dialect.js';
import type { Database } from './schema.js';

/** One compiled statement with its parameter values. */
export interface BoundQuery {
  readonly sql: string;
  readonly parameters: readonly unknown[];
  /**
   * A write of `runAtomically`'s that must change a row: when it changes none, the whole
   * transaction rolls back and `runAtomically` rejects with `GuardFailed` (an attempt that
   * no longer holds what it writes for, such as an idempotency claim taken over).
   */
  readonly guard?: boolean;
}

/** A guarded write (see `BoundQuery.guard`) changed nothing: its transaction rolled back. */
export class GuardFailed extends Error {
  override readonly name = 'GuardFailed';
  constructor() {
    super('a guarded write changed no row; its transaction was rolled back');
  }
}

/** Runs compiled SQL itself (at once or later), or answers undefined to leave it to Kysely. */
export interface DirectRunner {
  (
    sql: string,
    parameters: readonly unknown[],
    /** The statement's `Grouping` for these parameters (see `PreparedQueryOptions`). */
    grouping?: Grouping,
  ): QueryResult<unknown> | Promise<QueryResult<unknown>> | undefined;
  /** True when the runner groups statements: it is then given each one's `Grouping`. */
  readonly groups?: boolean;
  /** `runAtomically` on this database, or undefined to leave it to a Kysely transaction. */
  atomically?(
    read: BoundQuery,
    then: (rows: readonly unknown[]) => readonly BoundQuery[],
  ): Promise<readonly unknown[]> | undefined;
}

/** Where a repository's prepared queries run: the database's own runner, if any, else Kysely. */
export interface QueryTarget {
  readonly db: Kysely<Database>;
  readonly direct: DirectRunner | undefined;
}

export function queryTarget(
  db: Kysely<Database>,
  features: Pick<StoreFeatures, 'statements'>,
): QueryTarget {
  return { db, direct: features.statements };
}

const SENTINEL = '\u0000plauder-param:';

/** A placeholder for a named parameter while the query is built. */
export type Param = <T>(name: string) => T;

/**
 * Whether a statement may share a transaction with other callers' statements (PostgreSQL
 * commits the statements of one round of I/O together: named-statements.ts). A read
 * (`select`, no data-modifying CTE, no `for update` or `for share`) may: it locks
 * nothing. A write may when it says which rows it locks: `lock`, a string that orders it
 * among the others (rows are locked in the order of their strings, so two transactions
 * never wait for each other in a circle). Any other write commits alone.
 */
export type Grouping = { readonly lock: string } | 'read' | 'alone';

export interface PreparedQueryOptions<P> {
  /**
   * The rows a write locks, as a string that sorts like them: the table's name first, then
   * the row's key (e.g. `usage\0<key id>\0<month>`). Statements locking more than one row
   * must lock the others only after this one and only rows no other statement locks
   * first (the reservation's day row, after its month row).
   */
  readonly lock?: (params: P) => string;
}

export interface PreparedQuery<P extends Record<string, unknown>, R> {
  (target: QueryTarget, params: P): Promise<QueryResult<R>>;
  /** The statement with these parameter values, for `runAtomically`. */
  bind(params: P): BoundQuery & { readonly rows?: R };
}

export function prepareQuery<P extends Record<string, unknown>, R>(
  build: (param: Param) => Compilable<R>,
  options: PreparedQueryOptions<P> = {},
): PreparedQuery<P, R> {
  const compiled = build(<T>(name: string) => `${SENTINEL}${name}` as T).compile();
  // A select that locks rows (`for update`, `for share`) is no read in this sense.
  const read =
    /^select\b/i.test(compiled.sql) &&
    !/\bfor\s+(no\s+key\s+|key\s+)?(update|share)\b/i.test(compiled.sql);
  const { lock } = options;
  const grouping = (params: P): Grouping =>
    read ? 'read' : lock === undefined ? 'alone' : { lock: lock(params) };
  const slots = compiled.parameters.map((value) =>
    typeof value === 'string' && value.startsWith(SENTINEL)
      ? value.slice(SENTINEL.length)
      : undefined,
  );
  const bind = (params: P): BoundQuery => ({
    sql: compiled.sql,
    parameters: compiled.parameters.map((value, i) => {
      const slot = slots[i];
      return slot === undefined ? value : params[slot];
    }),
  });
  const run = (target: QueryTarget, params: P) => {
    const { parameters } = bind(params);
    const runner = target.direct;
    const direct = runner?.(compiled.sql, parameters, runner.groups ? grouping(params) : undefined);
    if (direct !== undefined)
      return Promise.resolve(direct as QueryResult<R> | Promise<QueryResult<R>>);
    // Not `{ ...compiled, parameters }`: see test/house/object-literals.test.ts.
    return target.db.executeQuery(Object.assign({}, compiled, { parameters }) as CompiledQuery<R>);
  };
  return Object.assign(run, { bind });
}

/**
 * A short read-modify-write: runs `read` (a statement that locks what it returns, such as
 * an upsert with `RETURNING`), then the statements `then` builds from its rows, in one
 * transaction, so no other writer gets in between, in this process or another. `then`
 * is synchronous and must not wait for anything: the lock is held while it runs. Returns
 * the rows `read` returned.
 *
 * On SQLite the direct runner does it inside its group commit, without leaving the
 * thread; elsewhere it is a Kysely transaction (on PostgreSQL the row lock is held from
 * `read` to the commit, a few round trips, never across a core call).
 */
export async function runAtomically<R>(
  target: QueryTarget,
  read: BoundQuery & { readonly rows?: R },
  then: (rows: readonly R[]) => readonly BoundQuery[],
): Promise<readonly R[]> {
  const direct = target.direct?.atomically?.(
    read,
    then as (rows: readonly unknown[]) => readonly BoundQuery[],
  );
  if (direct !== undefined) return direct as Promise<readonly R[]>;
  return target.db.transaction().execute(async (tx) => {
    const { rows } = await tx.executeQuery<R>(CompiledQuery.raw(read.sql, [...read.parameters]));
    for (const write of then(rows)) {
      const done = await tx.executeQuery(CompiledQuery.raw(write.sql, [...write.parameters]));
      if (write.guard && Number(done.numAffectedRows ?? 0) === 0) throw new GuardFailed();
    }
    return rows;
  });
}

/** Runs `steps` one after the other on `executor` (a transaction, to commit them with it). */
export async function runSteps(
  executor: Pick<Kysely<unknown>, 'executeQuery'>,
  steps: readonly BoundQuery[],
): Promise<void> {
  for (const step of steps) {
    await executor.executeQuery(CompiledQuery.raw(step.sql, [...step.parameters]));
  }
}
