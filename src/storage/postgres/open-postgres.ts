/**
 * @module storage/postgres/open-postgres
 * The shared store for several instances. A configurable number of connections, shared
 * between a `pg` pool and the hot path's pipelined lanes; `bigint` columns (Unix-millisecond
 * timestamps) come back as numbers; the hot path's statements are named, so each lane plans
 * them once (named-statements.ts); migrations run under a
 * session-level advisory lock, so instances that start together migrate one at a time.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { OpenedDatabase } from '../dialect.js';
import type { Database } from '../schema.js';
import { createNamedStatementRunner } from './named-statements.js';

/** Arbitrary, fixed: "plauder" in ASCII, so all instances contend for the same lock. */
const MIGRATION_LOCK_ID = 0x706c6175646572n;
const CONNECT_TIMEOUT_MS = 5000;
const STATEMENT_TIMEOUT_MS = 30_000;
const INT8_OID = 20;

export interface PostgresOptions {
  readonly url: string;
  readonly poolSize: number;
}

export function openPostgres(options: PostgresOptions): OpenedDatabase {
  const connection = {
    connectionString: options.url,
    application_name: 'plauder',
    statement_timeout: STATEMENT_TIMEOUT_MS,
    types: { getTypeParser: typeParser },
  };
  // A down or unreachable server fails requests promptly: each new connection has a
  // connect timeout. The pool itself gets none: pg-pool would apply it to the wait for a
  // free connection too, and on a busy machine a burst of requests queued behind the pool
  // then failed with 500 although the database was fine. A slow machine makes answers
  // slower, never wrong; queries stay bounded by the statement timeout.
  // The pool size is the instance's budget of connections: half of it (at least one) for
  // the hot path's pipelined lanes, the rest (at least one) for the pool.
  const lanes = Math.max(1, Math.floor(options.poolSize / 2));
  const pool = new pg.Pool({
    ...connection,
    max: Math.max(1, options.poolSize - lanes),
    Client: ConnectTimeoutClient,
  });
  // A connection the server drops (restart, failover) emits 'error': on the pool while
  // idle, on the client while checked out. Unheard, either would end the process. The
  // running query fails on its own, and the pool discards the broken connection.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // The hot path's prepared queries, outside transactions: named, pipelined, on lanes.
  const statements = createNamedStatementRunner({
    pool,
    connect: () => new ConnectTimeoutClient({ ...connection, pipeline: true }),
    maxLanes: lanes,
    Query: pg.Query,
    typeParser: (oid) => typeParser(oid, 'text') as (text: string) => unknown,
  });
  const keyChanges = listenForKeyChanges(() => new ConnectTimeoutClient(connection));

  return {
    db,
    features: {
      skipLocked: true,
      writingCtes: true,
      bytesInTextColumns: false,
      changesElsewhere: keyChanges.count,
      announceKeyChange: { sql: `select pg_notify('${KEY_CHANNEL}', '')`, parameters: [] },
      statements,
    },
    close: async () => {
      await Promise.all([statements.close(), keyChanges.stop()]);
    },
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    async migrateExclusively(migrate) {
      // A connection of its own: the migrations need the pool, which may have size 1.
      const lock = new ConnectTimeoutClient(connection);
      lock.on('error', () => {});
      await lock.connect();
      try {
        await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID.toString()]);
        await migrate();
      } finally {
        // Closing the session releases the lock, also when the unlock cannot be sent.
        await lock.end().catch(() => {});
      }
    },
  };
}

/** The channel on which every change to a key is announced, in the change's transaction. */
const KEY_CHANNEL = 'plauder_keys';
const RELISTEN_MS = 1000;

/**
 * Counts the key changes other processes commit (PostgreSQL delivers a notification at
 * commit), on a connection of its own, opened at the first count: a CLI command that
 * never authenticates never opens it. While that connection is not listening, every count
 * is a new number, so that nothing is taken from a cache that could have missed a change.
 */
function listenForKeyChanges(connect: () => pg.Client) {
  let client: pg.Client | undefined;
  let listening = false;
  let stopped = false;
  let changes = 0;
  let retry: NodeJS.Timeout | undefined;

  const start = () => {
    if (stopped) return;
    const current = connect();
    client = current;
    const lost = () => {
      if (client !== current) return;
      listening = false;
      client = undefined;
      current.end().catch(() => {});
      if (!stopped) {
        retry = setTimeout(start, RELISTEN_MS);
        retry.unref();
      }
    };
    current.on('error', lost);
    current.on('end', lost);
    current.on('notification', () => changes++);
    current
      .connect()
      .then(() => current.query(`listen ${KEY_CHANNEL}`))
      .then(() => {
        if (client !== current) return;
        // Changes made before now were missed: what was read before is stale.
        changes++;
        listening = true;
      })
      .catch(lost);
  };

  return {
    count(): number {
      if (client === undefined && retry === undefined && !stopped) start();
      return listening ? changes : ++changes;
    },
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(retry);
      const current = client;
      client = undefined;
      listening = false;
      await current?.end().catch(() => {});
    },
  };
}

/** A `pg` client whose own connection attempt times out (the pool's wait does not). */
class ConnectTimeoutClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  }
}

/** Timestamps are `bigint` milliseconds, far below 2^53: parse them as numbers. */
function typeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (oid === INT8_OID) return Number;
  return pg.types.getTypeParser(oid, format as 'text');
}
