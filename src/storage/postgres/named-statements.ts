/**
 * @module storage/postgres/named-statements
 * The hot path's prepared queries (storage/prepared-query.ts) as named statements, sent
 * pipelined on a few connections of their own ("lanes"), and committed in groups.
 *
 * - Named: each lane parses and plans a statement once, and every later run sends only its
 *   parameters (Bind, Execute), where Kysely's unnamed statements had PostgreSQL parse and
 *   plan the whole SQL text, a reservation's CTEs included, on every request.
 * - Grouped: the statements that arrive while the event loop handles one round of I/O
 *   (`setImmediate`, as SQLite's group commit) and may share a transaction (`Grouping`:
 *   reads, and writes that name the rows they lock) go to one lane as one implicit
 *   transaction: Bind and Execute for each, one Sync. The database commits them with one
 *   WAL flush and answers them in one write, where a statement of its own costs a commit,
 *   a wake-up of the database's process and a read here. Each caller's promise settles only after that
 *   commit. The group runs its writes sorted by the rows they lock, so two groups (on two
 *   lanes, or two instances) never wait for each other in a circle.
 * - A group that fails (one statement broke a constraint, a deadlock with a transaction
 *   elsewhere) is rolled back whole: nothing of it counted. Each of its statements then
 *   runs again on its own, so the one at fault fails alone and the others succeed.
 * - Alone: a write that does not say what it locks, and the first run of a statement on a
 *   lane (which parses it and learns its columns), is its own transaction, pipelined like
 *   the rest.
 * - Lanes: one at first; another opens (up to `maxLanes`) when every open lane has
 *   `LANE_DEPTH` statements in flight, so that one slow statement holds up few others. A
 *   lane that fails is dropped, and the next statement opens a new one. The pool keeps
 *   serving transactions and everything else.
 *
 * A statement prepared before another instance changed the schema (a rolling upgrade's
 * migration) can fail with "cached plan must not change result type", and behind a pooler
 * that moves connections between server sessions, with "prepared statement does not
 * exist". Both are raised before the statement runs: the lane, whose statements are all
 * suspect then, takes no more, and the statement runs again once, unnamed, on the pool.
 */
import type { QueryResult } from 'kysely';
import type pg from 'pg';
import type { DirectRunner, Grouping } from '../prepared-query.js';

/** feature_not_supported: "cached plan must not change result type". */
const STALE_PLAN = '0A000';
/** invalid_sql_statement_name: "prepared statement … does not exist". */
const UNKNOWN_STATEMENT = '26000';
/** Statements in flight on every open lane before another lane opens. */
export const LANE_DEPTH = 32;

export interface NamedStatementOptions {
  /** The pool, for the unnamed second run of a suspect statement. */
  readonly pool: pg.Pool;
  /** A new client for a lane (not connected; `pipeline` is set here). */
  readonly connect: () => pg.Client;
  /** Lanes open at most at once. */
  readonly maxLanes: number;
  /** `pg.Query`, which a statement sent on a pipelined connection must be an instance of. */
  readonly Query: typeof pg.Query;
  /** Parses a column's text by its type (the connections' `types.getTypeParser`). */
  readonly typeParser: (oid: number) => (text: string) => unknown;
}

export interface NamedStatementRunner extends DirectRunner {
  /** Ends every lane once the statements sent on it are answered. */
  close(): Promise<void>;
}

interface Lane {
  readonly client: pg.Client;
  /** Statements sent or queued on it and not yet answered. */
  inFlight: number;
  /** Connected (or connecting) and taking statements. */
  open: boolean;
  /** The columns of each statement run on this connection (prepared here, so). */
  readonly columns: Map<string, Columns>;
}

/** A statement's result columns: their names and how to parse each one's text. */
interface Columns {
  readonly names: readonly string[];
  readonly parsers: readonly ((text: string) => unknown)[];
}

interface Pending {
  readonly name: string;
  readonly sql: string;
  readonly values: unknown[];
  /** Where it sorts in a group ('' for a read); undefined: it commits alone. */
  readonly lock: string | undefined;
  resolve(result: QueryResult<unknown>): void;
  reject(error: unknown): void;
}

export function createNamedStatementRunner(options: NamedStatementOptions): NamedStatementRunner {
  const { pool, connect, maxLanes, typeParser } = options;
  const Group = groupClass(options.Query);
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

  const lanes: Lane[] = [];
  let waiting: Pending[] = [];
  let scheduled = false;
  let closed = false;

  const retire = (lane: Lane) => {
    if (!lane.open) return;
    lane.open = false;
    const at = lanes.indexOf(lane);
    if (at !== -1) lanes.splice(at, 1);
    // Statements already sent are answered first (pipeline mode waits for them).
    lane.client.end().catch(() => {});
  };

  const openLane = (): Lane => {
    const client = connect();
    const lane: Lane = { client, inFlight: 0, open: true, columns: new Map() };
    // A dropped connection emits 'error' (unheard, it would end the process): the
    // statements in flight on it fail on their own, and the lane takes no more.
    client.on('error', () => retire(lane));
    client.on('end', () => retire(lane));
    client.connect().catch(() => retire(lane));
    lanes.push(lane);
    return lane;
  };

  /** The lane with the fewest statements in flight, or a new one when all are deep. */
  const pick = (): Lane => {
    let best: Lane | undefined;
    for (const lane of lanes) if (best === undefined || lane.inFlight < best.inFlight) best = lane;
    if (best === undefined || (best.inFlight >= LANE_DEPTH && lanes.length < maxLanes))
      return openLane();
    return best;
  };

  /** Once, unnamed, on the pool: the lane had the statement prepared under a stale plan. */
  const again = (pending: Pending) => {
    pool.query(pending.sql, pending.values).then(
      (result) => pending.resolve(queryResult(result)),
      (error: unknown) => pending.reject(error),
    );
  };

  /** One statement as its own transaction, through `pg`'s own query (which parses it). */
  const sendAlone = (lane: Lane, pending: Pending) => {
    lane.inFlight++;
    lane.client.query({ name: pending.name, text: pending.sql, values: pending.values }).then(
      (result) => {
        lane.inFlight--;
        if (!lane.columns.has(pending.name)) lane.columns.set(pending.name, columnsOf(result));
        pending.resolve(queryResult(result));
      },
      (error: unknown) => {
        lane.inFlight--;
        if (!isSuspectStatement(error)) {
          pending.reject(error);
          return;
        }
        retire(lane);
        again(pending);
      },
    );
  };

  /** Statements the lane knows, as one transaction; each on its own again if it fails. */
  const sendGroup = (lane: Lane, group: Pending[]) => {
    lane.inFlight += group.length;
    const settle = (error: unknown, results: QueryResult<unknown>[] | undefined) => {
      lane.inFlight -= group.length;
      if (results !== undefined) {
        for (const [i, pending] of group.entries()) {
          pending.resolve(results[i] as QueryResult<unknown>);
        }
        return;
      }
      // Lost with the connection: whether it committed is unknown, so it is not run again.
      if (!fromServer(error)) {
        for (const pending of group) pending.reject(error);
        return;
      }
      // The database refused it, so the implicit transaction was rolled back whole: none of
      // it counted, and each statement may run again.
      if (isSuspectStatement(error)) {
        retire(lane);
        for (const pending of group) again(pending);
        return;
      }
      if (!lane.open) {
        for (const pending of group) pending.reject(error);
        return;
      }
      const stream = lane.client.connection.stream;
      stream.cork();
      try {
        for (const pending of group) sendAlone(lane, pending);
      } finally {
        stream.uncork();
      }
    };
    lane.client.query(new Group(group, lane.columns, settle) as unknown as pg.Submittable);
  };

  const flush = () => {
    scheduled = false;
    const batch = waiting;
    waiting = [];
    if (closed) {
      for (const pending of batch) pending.reject(new Error('The database connection is closed'));
      return;
    }
    const lane = pick();
    const group: Pending[] = [];
    // One write for the whole batch: `pg` corks the socket around each query; the outer
    // cork holds them until all are queued.
    const stream = lane.client.connection.stream;
    stream.cork();
    try {
      for (const pending of batch) {
        if (pending.lock !== undefined && lane.columns.has(pending.name)) group.push(pending);
        else sendAlone(lane, pending);
      }
      if (group.length === 1) sendAlone(lane, group[0] as Pending);
      else if (group.length > 1) sendGroup(lane, group.sort(byLock));
    } finally {
      stream.uncork();
    }
  };

  const runner = (sql: string, parameters: readonly unknown[], grouping: Grouping = 'alone') =>
    new Promise<QueryResult<unknown>>((resolve, reject) => {
      const lock = grouping === 'alone' ? undefined : grouping === 'read' ? '' : grouping.lock;
      // A bound query's values are a fresh array already (prepareQuery's `bind`): no copy.
      waiting.push({
        name: nameOf(sql),
        sql,
        values: parameters as unknown[],
        lock,
        resolve,
        reject,
      });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });

  // The columns a statement returns, for runs in a group (which are not described).
  const columnsOf = (result: pg.QueryResult): Columns => ({
    names: result.fields.map((field) => field.name),
    parsers: result.fields.map((field) => typeParser(field.dataTypeID)),
  });

  return Object.assign(runner, {
    groups: true,
    async close() {
      closed = true;
      const ending = lanes.splice(0).map((lane) => {
        lane.open = false;
        return lane.client.end().catch(() => {});
      });
      await Promise.all(ending);
    },
  });
}

/** Reads first (they lock nothing), then writes in the order of the rows they lock. */
function byLock(a: Pending, b: Pending): number {
  // Only statements that say what they lock are grouped: `lock` is set on both.
  const x = a.lock ?? '';
  const y = b.lock ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

type Settle = (error: unknown, results: QueryResult<unknown>[] | undefined) => void;

/**
 * Statements already prepared on the connection, sent as one implicit transaction: Bind
 * and Execute for each, then one Sync; answered to `settle` once, after the commit (or the
 * error that rolled it all back).
 *
 * `pg` takes only its own `Query` on a pipelined connection (it refuses cursors, whose
 * portals outlive their Sync): the class is made an instance of it without its
 * constructor, and implements what `pg`'s client calls on the query it is answering:
 * the rows of each statement in turn, each statement's completion, then ReadyForQuery.
 */
function groupClass(Query: typeof pg.Query) {
  class Group {
    /** No name and no text: `pg` records nothing as parsed for it (it parses nothing). */
    readonly name = undefined;
    readonly text = undefined;
    /** The statement whose rows arrive now. */
    private at = 0;
    private readonly results: QueryResult<unknown>[] = [];
    // Not `rows`: pg reads that name as the option of a cursor, which a pipeline refuses.
    private received: Record<string, unknown>[] = [];
    private settled = false;

    constructor(
      private readonly statements: readonly Pending[],
      private readonly columns: Map<string, Columns>,
      private readonly settle: Settle,
    ) {}

    submit(connection: pg.Connection): Error | null {
      const wire = connection as unknown as Wire;
      wire.stream.cork();
      try {
        for (const statement of this.statements) {
          wire.bind({
            statement: statement.name,
            values: statement.values,
            valueMapper: toParameter,
          });
          wire.execute({ portal: '', rows: 0 });
        }
        wire.sync();
      } finally {
        wire.stream.uncork();
      }
      return null;
    }

    handleDataRow(message: { fields: readonly (string | null)[] }) {
      const statement = this.statements[this.at];
      const columns = statement && this.columns.get(statement.name);
      if (columns === undefined) return;
      const row: Record<string, unknown> = {};
      const { names, parsers } = columns;
      for (let i = 0; i < names.length; i++) {
        const name = names[i];
        if (name === undefined) break;
        const text = message.fields[i];
        row[name] = text === null || text === undefined ? null : parsers[i]?.(text);
      }
      this.received.push(row);
    }

    handleCommandComplete(message: { text: string }) {
      // "INSERT 0 1", "UPDATE 3", "SELECT 1": the command, and the rows it affected last.
      const words = message.text.split(' ');
      const rowCount = Number(words[words.length - 1]) || 0;
      this.results.push(queryResult({ command: words[0] ?? '', rowCount, rows: this.received }));
      this.received = [];
      this.at++;
    }

    handleReadyForQuery() {
      if (this.results.length === this.statements.length) this.finish(undefined, this.results);
      else
        this.finish(new Error('The database answered fewer statements than were sent'), undefined);
    }

    handleError(error: unknown) {
      this.finish(error, undefined);
    }

    handleRowDescription() {}
    handleEmptyQuery() {}
    handlePortalSuspended() {}
    handleCopyInResponse(connection: pg.Connection) {
      (connection as unknown as Wire).sendCopyFail('plauder sends no data to copy');
    }
    handleCopyData() {}

    private finish(error: unknown, results: QueryResult<unknown>[] | undefined) {
      if (this.settled) return;
      this.settled = true;
      this.settle(error, results);
    }
  }
  Object.setPrototypeOf(Group.prototype, Query.prototype);
  return Group;
}

/** What a group uses of `pg`'s connection (pg 8.23; its type declarations lag behind). */
interface Wire {
  readonly stream: { cork(): void; uncork(): void };
  bind(config: {
    statement: string;
    values: unknown[];
    valueMapper: (value: unknown) => string | Buffer | null;
  }): void;
  execute(config: { portal: string; rows: number }): void;
  sync(): void;
  sendCopyFail(message: string): void;
}

/** A parameter as the protocol's text format has it (the hot path binds strings, numbers, bytes). */
function toParameter(value: unknown): string | Buffer | null {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** An ErrorResponse of the database (it has a severity), not a failure of the connection. */
function fromServer(error: unknown): boolean {
  return typeof (error as { severity?: unknown } | null)?.severity === 'string';
}

function isSuspectStatement(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === STALE_PLAN || code === UNKNOWN_STATEMENT;
}

/** What Kysely's PostgreSQL driver makes of a result. */
function queryResult({
  command,
  rowCount,
  rows,
}: Pick<pg.QueryResult, 'command' | 'rowCount' | 'rows'>): QueryResult<unknown> {
  const changed =
    command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
  return {
    rows: rows ?? [],
    numAffectedRows: changed ? BigInt(rowCount ?? 0) : undefined,
  };
}
