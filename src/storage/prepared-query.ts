/**
 * @module storage/prepared-query
 * Building and compiling a Kysely query costs several times more than running it on
 * SQLite. Hot-path queries are therefore compiled once, with named placeholders, and
 * executed with fresh parameter values: same SQL, same dialect, no string building.
 */
import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';

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
    return executor.executeQuery({ ...compiled, parameters } as CompiledQuery<R>);
  };
}
