/**
 * @module storage/prepared-query
 * Building and compiling a Kysely query costs several times more than running it on
 * SQLite. Hot-path queries are therefore compiled once, with named placeholders, and
 * executed with fresh parameter values: same SQL, same dialect, no string building.
 *
 * A database may also register a direct runner for its Kysely instance (SQLite does): a
 * prepared query run on that instance, outside any transaction, then skips Kysely's
 * connection hand-over, which on SQLite costs more than the statement itself.
 */
import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';

/** Runs compiled SQL itself (at once or later), or answers undefined to leave it to Kysely. */
export type DirectRunner = (
  sql: string,
  parameters: readonly unknown[],
) => QueryResult<unknown> | Promise<QueryResult<unknown>> | undefined;

const directRunners = new WeakMap<object, DirectRunner>();

/** Prepared queries executed on `db` itself go through `runner` when it can take them. */
export function registerDirectRunner(db: object, runner: DirectRunner): void {
  directRunners.set(db, runner);
}

const SENTINEL = '\u0000plauder-param:';

/** A placeholder for a named parameter while the query is built. */
export type Param = <T>(name: string) => T;

export type PreparedQuery<P extends Record<string, unknown>, R> = (
  executor: Pick<Kysely<unknown>, 'executeQuery'>,
  params: P,
) => Promise<QueryResult<R>>;

export function prepareQuery<P extends Record<string, unknown>, R>(
  build: (param: Param) => Compilable<R>,
): PreparedQuery<P, R> {
  const compiled = build(<T>(name: string) => `${SENTINEL}${name}` as T).compile();
  const slots = compiled.parameters.map((value) =>
    typeof value === 'string' && value.startsWith(SENTINEL)
      ? value.slice(SENTINEL.length)
      : undefined,
  );
  return (executor, params) => {
    const parameters = compiled.parameters.map((value, i) => {
      const slot = slots[i];
      return slot === undefined ? value : params[slot];
    });
    const direct = directRunners.get(executor)?.(compiled.sql, parameters);
    if (direct !== undefined)
      return Promise.resolve(direct as QueryResult<R> | Promise<QueryResult<R>>);
    return executor.executeQuery({ ...compiled, parameters } as CompiledQuery<R>);
  };
}
