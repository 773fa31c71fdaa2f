/**
 * @module storage/repositories/usage-repository
 * Counters keyed by (key id, month): the month's requests, and those of the row's current
 * clock minute. `reserve` checks and counts both limits on that one row in one atomic step
 * (a conditional upsert; on SQLite a batch, see below), so they hold under any concurrency,
 * in one process or many, and a request refused by either consumes neither.
 *
 * A reservation that reaches a watched count (80 % and 100 % of the month, for events) is
 * committed together with the writes that record it: those few run as a read-modify-write
 * (`runAtomically`); every other reservation is the single statement (on SQLite, outside a
 * batch, followed by its day's statement in the same job, see below).
 *
 * An admitted reservation also counts its day (`usage_days`), and a refund gives the day
 * back, in the same transaction, so the days of a month add up to its count. Where the
 * database has data-modifying CTEs (PostgreSQL) the day rides in the reservation's own
 * statement, which writes it only when the month's upsert admitted the request: still one
 * statement, one round trip. Elsewhere (SQLite) the day is a second statement in the
 * reservation's read-modify-write, which the direct runner commits in the same group.
 *
 * On SQLite the reservations of one key and month that arrive while a group is open are
 * one batch (`runBatched`): the row is read once, each reservation is decided in the order
 * it came exactly as the conditional upsert would decide it, and the row, each day touched
 * and the events of watched counts are written once, in the group's transaction. Fifty
 * concurrent requests of one key cost three statements instead of two hundred.
 */
import { type Kysely, sql } from 'kysely';
import type { StoreFeatures } from '../dialect.js';
import {
  type AlongsideRead,
  type BatchStatements,
  type BoundQuery,
  type Param,
  type PreparedQuery,
  type PreparedQueryOptions,
  prepareQuery,
  runAtomically,
  runBatched,
  type WriteStep,
} from '../prepared-query.js';
import type { Database } from '../schema.js';

interface UsageRow {
  readonly keyId: string;
  readonly month: string;
  readonly used: number;
  /** The clock minute the row last counted in, and its requests. */
  readonly minute: number;
  readonly minuteUsed: number;
}

/** One reserved request: the month, clock minute and day whose counters counted it. */
export interface CountedUnit {
  /** `YYYY-MM` in the quota time zone. */
  readonly month: string;
  /** Unix ms / 60 000. */
  readonly minute: number;
  /** `YYYY-MM-DD` in the quota time zone. */
  readonly day: string;
}

/** What one request asks of the counters. */
export interface ReserveRequest {
  readonly keyId: string;
  readonly month: string;
  /** The request's day (`YYYY-MM-DD` in the quota time zone), counted when admitted. */
  readonly day: string;
  readonly limit: number;
  /** The clock minute (Unix ms / 60 000) the request falls in. */
  readonly minute: number;
  /** Requests per minute; undefined = no per-minute limit. */
  readonly minuteLimit: number | undefined;
  /**
   * Counts of the month at which `record(used)` adds writes to the reservation's
   * transaction (at most two; none when nothing is recorded).
   */
  readonly watch: readonly number[];
  readonly record: (used: number) => readonly WriteStep[];
  /** A read to run in the reservation's statement where the database can (see AlongsideRead). */
  readonly alongside?: AlongsideRead;
  /**
   * Writes committed in the reservation's transaction when it is admitted (an idempotent
   * request's claim records the unit it holds). With them, the reservation is never batched
   * and carries no read.
   */
  readonly also?: readonly WriteStep[];
}

export type ReserveOutcome =
  | {
      readonly admitted: true;
      readonly used: number;
      readonly minuteUsed: number;
      /**
       * The carried read's row (null: none matched), when it ran in the reservation's
       * statement; absent when the caller must read on its own.
       */
      readonly alongside?: { readonly row: unknown };
    }
  | {
      readonly admitted: false;
      /** The month is checked first (docs/contract.md, "Chat endpoints": row 3 before row 3a). */
      readonly refusedBy: 'month' | 'minute';
      readonly used: number;
      readonly minuteUsed: number;
    };

export interface UsageRepository {
  /** Counts one request if the month and the minute both have room; else counts nothing. */
  reserve(request: ReserveRequest): Promise<ReserveOutcome>;
  /**
   * Gives back one reserved request (the core failed), to the minute too while it lasts,
   * and to its day when given.
   */
  refund(keyId: string, month: string, minute?: number, day?: string): Promise<void>;
  /** The writes of `refund` with a day, to commit with another write (a claim given up). */
  refundSteps(keyId: string, month: string, minute: number, day: string): WriteStep[];
  used(keyId: string, month: string): Promise<number>;
  /** The month's row (zeros when there is none). */
  row(keyId: string, month: string): Promise<UsageRow>;
  forMonth(month: string): Promise<UsageRow[]>;
  forKey(keyId: string): Promise<UsageRow[]>;
  /** A key's days from `first` to `last` (`YYYY-MM-DD`, inclusive) with requests, in order. */
  days(keyId: string, first: string, last: string): Promise<DayUsageRow[]>;
}

interface DayUsageRow {
  /** `YYYY-MM-DD` in the quota time zone. */
  readonly day: string;
  readonly used: number;
}

/** "No per-minute limit": above any count, and within PostgreSQL's integer. */
const NO_LIMIT = 2_147_483_647;
/** A watched count no reservation returns (counts start at 1). */
const UNWATCHED = 0;

type KeyMonth = { keyId: string; month: string };
type KeyDay = { keyId: string; day: string };
type ReserveParams = KeyMonth & {
  day: string;
  minute: number;
  limit: number;
  minuteLimit: number;
  watchA: number;
  watchB: number;
};
type CountsRow = { used: number; minute_used: number };
type CarryingRow = CountsRow & { alongside: unknown };
/** The rows a reservation or refund locks: the month's row (then its day's). */
const usageLock = { lock: (p: KeyMonth) => `usage\0${p.keyId}\0${p.month}` };

/** The prefix of a carried read's parameters among the reservation's. */
const ALONGSIDE = 'alongside_';

/** The reservation's parameters and the carried read's, under their prefix. */
function carried(params: ReserveParams, read: AlongsideRead): Record<string, unknown> {
  const all: Record<string, unknown> = Object.assign({}, params);
  for (const [name, value] of Object.entries(read.params)) all[`${ALONGSIDE}${name}`] = value;
  return all;
}

export function createUsageRepository(
  db: Kysely<Database>,
  features: StoreFeatures,
): UsageRepository {
  /** The month's conditional upsert; `watched` leaves watched counts to the atomic path. */
  const monthUpsert = (p: Param, watched: boolean) =>
    db
      .insertInto('usage')
      .values({
        key_id: p<string>('keyId'),
        month: p<string>('month'),
        used: 1,
        minute: p<number>('minute'),
        minute_used: 1,
      })
      .onConflict((oc) =>
        oc
          .columns(['key_id', 'month'])
          .doUpdateSet((eb) => ({
            used: eb('usage.used', '+', 1),
            minute_used: eb
              .case()
              .when('usage.minute', '=', eb.ref('excluded.minute'))
              .then(eb('usage.minute_used', '+', 1))
              .else(1)
              .end(),
            minute: eb.ref('excluded.minute'),
          }))
          .where((eb) => {
            const room = [
              eb('usage.used', '<', p<number>('limit')),
              eb.or([
                eb('usage.minute', '<>', eb.ref('excluded.minute')),
                eb('usage.minute_used', '<', p<number>('minuteLimit')),
              ]),
            ];
            if (!watched) {
              room.push(eb(eb('usage.used', '+', 1), '<>', p<number>('watchA')));
              room.push(eb(eb('usage.used', '+', 1), '<>', p<number>('watchB')));
            }
            return eb.and(room);
          }),
      );

  /** The month's upsert and, where the database has data-modifying CTEs, the day's. */
  const reserveCtes = (p: Param, watched: boolean) =>
    db
      .with('admitted', () => monthUpsert(p, watched).returning(['key_id', 'used', 'minute_used']))
      // Runs whatever the outer select reads; inserts nothing when none was admitted.
      .with('counted_day', (qc) =>
        qc
          .insertInto('usage_days')
          .columns(['key_id', 'day', 'used'])
          .expression((eb) =>
            eb
              .selectFrom('admitted')
              .select((s) => [
                'admitted.key_id',
                s.cast<string>(s.val(p<string>('day')), 'text').as('day'),
                s.lit(1).as('used'),
              ]),
          )
          .onConflict((oc) =>
            oc
              .columns(['key_id', 'day'])
              .doUpdateSet((eb) => ({ used: eb('usage_days.used', '+', 1) })),
          ),
      );
  const upsert = (watched: boolean): PreparedQuery<ReserveParams, CountsRow> =>
    features.writingCtes
      ? prepareQuery<ReserveParams, CountsRow>(
          (p) => reserveCtes(p, watched).selectFrom('admitted').select(['used', 'minute_used']),
          usageLock,
        )
      : prepareQuery<ReserveParams, CountsRow>((p) =>
          monthUpsert(p, watched).returning(['used', 'minute_used']),
        );
  /**
   * The reservation carrying a read (PostgreSQL): its row, as JSON, beside the counts of an
   * admitted request; nothing when none was admitted. One prepared statement per kind.
   */
  const carrying = new Map<string, PreparedQuery<Record<string, unknown>, CarryingRow>>();
  const carryingQuery = (read: AlongsideRead) => {
    let query = carrying.get(read.kind);
    if (query === undefined) {
      query = prepareQuery<Record<string, unknown>, CarryingRow>(
        (p) =>
          reserveCtes(p, false)
            .with('alongside', () => read.build(db, (name) => p(`${ALONGSIDE}${name}`)))
            .selectFrom('admitted')
            .select([
              'admitted.used',
              'admitted.minute_used',
              sql<unknown>`(select row_to_json(alongside) from alongside)`.as('alongside'),
            ]),
        usageLock as PreparedQueryOptions<Record<string, unknown>>,
      );
      carrying.set(read.kind, query);
    }
    return query;
  };
  const reserveQuery = upsert(false);
  const reserveWatchedQuery = upsert(true);

  const dayCountQuery = prepareQuery<KeyDay, unknown>((p) =>
    db
      .insertInto('usage_days')
      .values({ key_id: p<string>('keyId'), day: p<string>('day'), used: 1 })
      .onConflict((oc) =>
        oc
          .columns(['key_id', 'day'])
          .doUpdateSet((eb) => ({ used: eb('usage_days.used', '+', 1) })),
      ),
  );
  /** The day's write that follows an admitted reservation, where its statement has none. */
  const dayCount = (rows: readonly unknown[], params: KeyDay): BoundQuery[] =>
    !features.writingCtes && rows.length > 0 ? [dayCountQuery.bind(params)] : [];

  type RefundParams = KeyMonth & { minute: number };
  const monthRefund = (p: Param) =>
    db
      .updateTable('usage')
      .set((eb) => ({
        used: eb('used', '-', 1),
        minute_used: eb
          .case()
          .when(eb.and([eb('minute', '=', p<number>('minute')), eb('minute_used', '>', 0)]))
          .then(eb('minute_used', '-', 1))
          .else(eb.ref('minute_used'))
          .end(),
      }))
      .where('key_id', '=', p<string>('keyId'))
      .where('month', '=', p<string>('month'))
      .where('used', '>', 0);
  const refundQuery = prepareQuery<RefundParams, unknown>((p) => monthRefund(p), usageLock);
  const dayRefund = (p: Param) =>
    db
      .updateTable('usage_days')
      .set((eb) => ({ used: eb('used', '-', 1) }))
      .where('key_id', '=', p<string>('keyId'))
      .where('day', '=', p<string>('day'))
      .where('used', '>', 0);
  /** The month's refund, and the day's only when the month had something to give back. */
  const refundWithDayQuery = features.writingCtes
    ? prepareQuery<RefundParams & KeyDay, unknown>(
        (p) =>
          db
            .with('refunded', () => monthRefund(p).returning('key_id'))
            .updateTable('usage_days')
            .set((eb) => ({ used: eb('usage_days.used', '-', 1) }))
            .where('usage_days.key_id', '=', p<string>('keyId'))
            .where('usage_days.day', '=', p<string>('day'))
            .where('usage_days.used', '>', 0)
            .where((eb) => eb.exists(eb.selectFrom('refunded').select('refunded.key_id'))),
        usageLock,
      )
    : prepareQuery<RefundParams & KeyDay, { key_id: string }>((p) =>
        monthRefund(p).returning('key_id'),
      );
  const dayRefundQuery = prepareQuery<KeyDay, unknown>((p) => dayRefund(p));
  const daysQuery = prepareQuery<KeyDay & { last: string }, { day: string; used: number }>((p) =>
    db
      .selectFrom('usage_days')
      .select(['day', 'used'])
      .where('key_id', '=', p<string>('keyId'))
      .where('day', '>=', p<string>('day'))
      .where('day', '<=', p<string>('last'))
      .orderBy('day'),
  );
  const rowQuery = prepareQuery<KeyMonth, { used: number; minute: number; minute_used: number }>(
    (p) =>
      db
        .selectFrom('usage')
        .select(['used', 'minute', 'minute_used'])
        .where('key_id', '=', p<string>('keyId'))
        .where('month', '=', p<string>('month')),
  );

  async function row(keyId: string, month: string): Promise<UsageRow> {
    const found = (await rowQuery(db, { keyId, month })).rows[0];
    return {
      keyId,
      month,
      used: found ? Number(found.used) : 0,
      minute: found ? Number(found.minute) : 0,
      minuteUsed: found ? Number(found.minute_used) : 0,
    };
  }

  /** Why a reservation found no room, from the row as it is now; undefined if it has room. */
  function refusal(request: ReserveRequest, current: UsageRow): ReserveOutcome | undefined {
    const minuteUsed = current.minute === request.minute ? current.minuteUsed : 0;
    const { used } = current;
    if (used >= request.limit) return { admitted: false, used, minuteUsed, refusedBy: 'month' };
    if (minuteUsed >= (request.minuteLimit ?? NO_LIMIT))
      return { admitted: false, used, minuteUsed, refusedBy: 'minute' };
    return undefined;
  }

  /** The month's row as a batch leaves it. */
  const setRowQuery = prepareQuery<
    KeyMonth & { used: number; minute: number; minuteUsed: number },
    unknown
  >((p) =>
    db
      .insertInto('usage')
      .values({
        key_id: p<string>('keyId'),
        month: p<string>('month'),
        used: p<number>('used'),
        minute: p<number>('minute'),
        minute_used: p<number>('minuteUsed'),
      })
      .onConflict((oc) =>
        oc.columns(['key_id', 'month']).doUpdateSet((eb) => ({
          used: eb.ref('excluded.used'),
          minute: eb.ref('excluded.minute'),
          minute_used: eb.ref('excluded.minute_used'),
        })),
      ),
  );
  /** A day's requests admitted by one batch. */
  const dayAddQuery = prepareQuery<KeyDay & { count: number }, unknown>((p) =>
    db
      .insertInto('usage_days')
      .values({ key_id: p<string>('keyId'), day: p<string>('day'), used: p<number>('count') })
      .onConflict((oc) =>
        oc
          .columns(['key_id', 'day'])
          .doUpdateSet((eb) => ({ used: eb('usage_days.used', '+', eb.ref('excluded.used')) })),
      ),
  );

  /**
   * The reservations of one key and month, in the order they came, against the row as the
   * batch's transaction finds it: each is refused or counted as the conditional upsert
   * would (the month first, then the minute; a new minute starts its count afresh).
   */
  function reserveBatch(
    requests: readonly ReserveRequest[],
    statements: BatchStatements,
  ): ReserveOutcome[] {
    const [first] = requests;
    if (first === undefined) return [];
    const { keyId, month } = first;
    const found = statements.all(rowQuery.bind({ keyId, month }))[0] as
      | { used: number; minute: number; minute_used: number }
      | undefined;
    const current = {
      keyId,
      month,
      used: found ? Number(found.used) : 0,
      minute: found ? Number(found.minute) : 0,
      minuteUsed: found ? Number(found.minute_used) : 0,
    };
    const days = new Map<string, number>();
    const recorded: BoundQuery[] = [];
    const outcomes = requests.map((request): ReserveOutcome => {
      const refused = refusal(request, current);
      if (refused) return refused;
      current.minuteUsed = (current.minute === request.minute ? current.minuteUsed : 0) + 1;
      current.minute = request.minute;
      current.used += 1;
      days.set(request.day, (days.get(request.day) ?? 0) + 1);
      if (request.watch.includes(current.used)) recorded.push(...request.record(current.used));
      return { admitted: true, used: current.used, minuteUsed: current.minuteUsed };
    });
    if (days.size === 0) return outcomes;
    statements.run(setRowQuery.bind(current));
    for (const [day, count] of days) statements.run(dayAddQuery.bind({ keyId, day, count }));
    for (const step of recorded) statements.run(step);
    return outcomes;
  }

  /** An admitted reservation's counts, with the carried read's row when it carried one. */
  const admitted = (rows: readonly (CountsRow | CarryingRow)[]): ReserveOutcome | undefined => {
    const first = rows[0];
    if (first === undefined) return undefined;
    const used = Number(first.used);
    const minuteUsed = Number(first.minute_used);
    if (!('alongside' in first)) return { admitted: true, used, minuteUsed };
    return { admitted: true, used, minuteUsed, alongside: { row: first.alongside ?? null } };
  };

  return {
    async reserve(request) {
      const { keyId, month, day, limit, minute, watch } = request;
      const params: ReserveParams = {
        keyId,
        month,
        day,
        minute,
        limit,
        minuteLimit: request.minuteLimit ?? NO_LIMIT,
        watchA: watch[0] ?? UNWATCHED,
        watchB: watch[1] ?? UNWATCHED,
      };
      if (limit < 1) return refusal(request, await row(keyId, month)) as ReserveOutcome;
      const also = request.also ?? [];
      if (!features.writingCtes && also.length === 0) {
        const batched = runBatched(db, `reserve\0${keyId}\0${month}`, request, reserveBatch);
        if (batched !== undefined) return batched;
      }
      // A first request inserts the row with 1 unconditionally: only the atomic path may
      // insert a watched 1.
      if (!watch.includes(1) && also.length === 0) {
        const { alongside } = request;
        const fast =
          features.writingCtes && alongside !== undefined
            ? admitted((await carryingQuery(alongside)(db, carried(params, alongside))).rows)
            : admitted(
                features.writingCtes
                  ? (await reserveQuery(db, params)).rows
                  : await runAtomically(db, reserveQuery.bind(params), (rows) =>
                      dayCount(rows, params),
                    ),
              );
        if (fast) return fast;
      }
      // No room, a watched count or writes to go with it: tell which from the row, or
      // reserve atomically.
      for (let attempt = 1; ; attempt++) {
        const current = await row(keyId, month);
        const refused = refusal(request, current);
        if (refused) return refused;
        const rows = await runAtomically(db, reserveWatchedQuery.bind(params), (result) => {
          const used = result[0] === undefined ? undefined : Number(result[0].used);
          if (used === undefined) return [];
          const recorded = watch.includes(used) ? request.record(used) : [];
          return [...dayCount(result, params), ...recorded, ...also];
        });
        const done = admitted(rows);
        if (done) return done;
        // A refund made room between the read and the upsert, and others took it: look again.
        if (attempt >= 3) return refusal(request, await row(keyId, month)) ?? refusedNow(current);
      }
    },

    async refund(keyId, month, minute = -1, day) {
      if (day === undefined) {
        await refundQuery(db, { keyId, month, minute });
        return;
      }
      const params = { keyId, month, minute, day };
      if (features.writingCtes) await refundWithDayQuery(db, params);
      else
        await runAtomically(db, refundWithDayQuery.bind(params), (rows) =>
          rows.length > 0 ? [dayRefundQuery.bind(params)] : [],
        );
    },

    refundSteps(keyId, month, minute, day) {
      return [refundQuery.bind({ keyId, month, minute }), dayRefundQuery.bind({ keyId, day })];
    },

    async used(keyId, month) {
      return (await row(keyId, month)).used;
    },

    row,

    async forMonth(month) {
      const rows = await db
        .selectFrom('usage')
        .select(['key_id', 'month', 'used', 'minute', 'minute_used'])
        .where('month', '=', month)
        .execute();
      return rows.map(toUsageRow);
    },

    async forKey(keyId) {
      const rows = await db
        .selectFrom('usage')
        .select(['key_id', 'month', 'used', 'minute', 'minute_used'])
        .where('key_id', '=', keyId)
        .orderBy('month')
        .execute();
      return rows.map(toUsageRow);
    },

    async days(keyId, first, last) {
      const { rows } = await daysQuery(db, { keyId, day: first, last });
      return rows.map((r) => ({ day: r.day, used: Number(r.used) }));
    },
  };
}

/** Counters that kept changing under three attempts: the minute is what is contended. */
function refusedNow(current: UsageRow): ReserveOutcome {
  return {
    admitted: false,
    refusedBy: 'minute',
    used: current.used,
    minuteUsed: current.minuteUsed,
  };
}

function toUsageRow(r: {
  key_id: string;
  month: string;
  used: number;
  minute: number;
  minute_used: number;
}): UsageRow {
  return {
    keyId: r.key_id,
    month: r.month,
    used: Number(r.used),
    minute: Number(r.minute),
    minuteUsed: Number(r.minute_used),
  };
}
