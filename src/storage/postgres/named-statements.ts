/**
 * @module storage/postgres/named-statements
 * The hot path's prepared queries (storage/prepared-query.ts) as named statements: each
 * connection parses and plans a statement once, and every later run sends only its
 * parameters (Bind, Execute), where Kysely's unnamed statements had PostgreSQL parse and
 * plan the whole SQL text, a reservation's CTEs included, on every request. Measured in
 * bench/README.md ("Named statements on PostgreSQL"): the database's CPU per request × 0.6-0.7.
 *
 * A statement prepared before another instance changed the schema (a rolling upgrade's
 * migration) can fail with "cached plan must not change result type", and behind a pooler
 * that moves connections between server sessions, with "prepared statement does not
 * exist". Both are raised before the statement runs: the connection, whose statements are
 * all suspect then, is closed, and the statement runs again once, unnamed.
 */
import type { QueryResult } from 'kysely';
import type pg from 'pg';
import type { DirectRunner } from '../prepared-query.js';

/** feature_not_supported: "cached plan must not change result type". */
const STALE_PLAN = '0A000';
/** invalid_sql_statement_name: "prepared statement … does not exist". */
const UNKNOWN_STATEMENT = '26000';

export function createNamedStatementRunner(pool: pg.Pool): DirectRunner {
  // Prepared queries are compiled once at start-up, so this map has a fixed, small size;
  // a lookup by the same string instance hashes it once.
  const names = new Map<string, string>();
  const nameOf = (sql: string) => {
    let name = names.get(sql);
    if (name === undefined) {
      name = `plauder_${names.size + 1}`;
      names.set(sql, name);
    }
    return name;
  };

  return async (sql, parameters) => {
    // A bound query's values are a fresh array already (prepareQuery's `bind`): no copy.
    const values = parameters as unknown[];
    const client = await pool.connect();
    try {
      const result = await client.query({ name: nameOf(sql), text: sql, values });
      client.release();
      return queryResult(result);
    } catch (error) {
      if (!isSuspectStatement(error)) {
        client.release();
        throw error;
      }
      client.release(error as Error);
    }
    return queryResult(await pool.query(sql, values));
  };
}

function isSuspectStatement(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === STALE_PLAN || code === UNKNOWN_STATEMENT;
}

/** What Kysely's PostgreSQL driver makes of a result. */
function queryResult({ command, rowCount, rows }: pg.QueryResult): QueryResult<unknown> {
  const changed =
    command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
  return {
    rows: rows ?? [],
    numAffectedRows: changed ? BigInt(rowCount ?? 0) : undefined,
  };
}
