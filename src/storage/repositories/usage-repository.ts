/**
 * @module storage/repositories/usage-repository
 * Counters keyed by (key id, month): the month's requests, and those of the row's current
 * clock minute. Whether a request has room (docs/contract.md, rows 3 and 3a) is decided by
 * one statement, the conditional upsert of `reserve`, which checks and counts both limits
 * on that one row in one atomic step, so they hold under any concurrency, in one process or
 * many, and a request refused by either consumes neither. The rule itself is written once
 * (`room`); `standing` applies it to the row as it is, to tell a refused request why.
 *
 * An admitted reservation also counts its day (`usage_days`), and a refund gives the day
 * back, in the same transaction, so the days of a month add up to its count. Where the
 * database has data-modifying CTEs (PostgreSQL) the day rides in the reservation's own
 * statement, one round trip; elsewhere (SQLite) the day is a second statement in the
 * reservation's read-modify-write, which the direct runner commits in the same group.
 * A reservation that reaches a watched count (80 % and 100 % of the month, for events), or
 * that brings writes of its own, commits them in that read-modify-write too.
 */
import { type Expression, type ExpressionBuilder, type Kysely, sql } from 'kysely';
import type { StoreFeatures } from '../dialect.js';
import {
  type BoundQuery,
  type Param,
  type PreparedQuery,
  prepareQuery,
  queryTarget,
  runAtomically,
} from '../prepared-query.js';
import type { Database } from '../schema.js';
import { UnitOfWork, type Writes } from '../unit-of-work.js';

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

/** A key's limits at one moment: its month, clock minute and limits. */
interface LimitsAt {
  readonly keyId: string;
  readonly month: string;
  readonly limit: number;
  /** The clock minute (Unix ms / 60 000) the request falls in. */
  readonly minute: number;
  /** Requests per minute; undefined = no per-minute limit. */
  readonly minuteLimit: number | undefined;
}

/** What one request asks of the counters. */
export interface ReserveRequest extends LimitsAt {
  /** The request's day (`YYYY-MM-DD` in the quota time zone), counted when admitted. */
  readonly day: string;
  /**
   * Counts of the month at which `record(used)` adds writes to the reservation's
   * transaction (at most two; none when nothing is recorded).
   */
  readonly watch: readonly number[];
  readonly record: (used: number) => Writes;
  /**
   * Writes committed in the reservation's transaction when it is admitted (an idempotent
   * request's claim records the unit it holds).
   */
  readonly also?: Writes;
}

/** The counts of the month and of the current minute, and which limit, if any, is reached. */
interface Standing {
  readonly used: number;
  readonly minuteUsed: number;
  /** The month is checked first (docs/contract.md, "Chat endpoints": row 3 before row 3a). */
  readonly refusedBy: 'month' | 'minute' | undefined;
}

export type ReserveOutcome =
  | { readonly admitted: true; readonly used: number; readonly minuteUsed: number }
  | {
      readonly admitted: false;
      readonly refusedBy: 'month' | 'minute';
      readonly used: number;
      readonly minuteUsed: number;
    };

export interface UsageRepository {
  /** Counts one request if the month and the minute both have room; else counts nothing. */
  reserve(request: ReserveRequest): Promise<ReserveOutcome>;
  /** The counts as they are now, and whether a request would find no room (see `room`). */
  standing(limits: LimitsAt): Promise<Standing>;
  /**
   * Gives back one reserved request (the core failed), to the minute too while it lasts,
   * and to its day when given.
   */
  refund(keyId: string, month: string, minute?: number, day?: string): Promise<void>;
  /** The writes of `refund` with a day, to commit with another write (a claim given up). */
  refundWrites(keyId: string, unit: CountedUnit): Writes;
  /**
   * A hang-up before delivery (docs/quota-and-limits.md, "Hang-ups"): counted on the month's
   * row for the unit's minute, and the unit given back to the month and its day (never to
   * the minute) only while the minute's hang-ups are at most `free`; beyond them it counts
   * as delivered. One conditional update of the row, so the bound holds across instances.
   */
  hangUp(keyId: string, unit: CountedUnit, free: number): Promise<void>;
  /** The writes of `hangUp`, to commit with another write (a claim given up). */
  hangUpWrites(keyId: string, unit: CountedUnit, free: number): Writes;
  used(keyId: string, month: string): Promise<number>;
  /** The month's row (zeros when there is none). */
  row(keyId: string, month: string): Promise<UsageRow>;
  /** The month's rows of these keys (keys without a row have none). */
  forKeys(month: string, keyIds: readonly string[]): Promise<UsageRow[]>;
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

type KeyMonth = { keyId: string; month: string };
type KeyDay = { keyId: string; day: string };
type LimitParams = KeyMonth & { minute: number; limit: number; minuteLimit: number };
type ReserveParams = LimitParams & { day: string };
type CountsRow = { used: number; minute_used: number };
/** The rows a reservation or refund locks: the month's row (then its day's). */
const usageLock = { lock: (p: KeyMonth) => `usage\0${p.keyId}\0${p.month}` };

/**
 * The rule: room in the month and in the clock minute, given the month's count and the
 * count of the request's minute so far (parameters `limit`, `minuteLimit`).
 */
function room(used: Expression<number>, minuteUsed: Expression<number>, p: Param) {
  return {
    month: sql<boolean>`${used} < ${p<number>('limit')}`,
    minute: sql<boolean>`${minuteUsed} < ${p<number>('minuteLimit')}`,
  };
}

/** The row's count of the request's minute (parameter `minute`): a new minute starts at 0. */
const minuteCount = (
  minute: Expression<number | null>,
  minuteUsed: Expression<number | null>,
  p: Param,
) => sql<number>`case when ${minute} = ${p<number>('minute')} then ${minuteUsed} else 0 end`;

const limitParams = (limits: LimitsAt): LimitParams => ({
  keyId: limits.keyId,
  month: limits.month,
  minute: limits.minute,
  limit: limits.limit,
  minuteLimit: limits.minuteLimit ?? NO_LIMIT,
});

export function createUsageRepository(
  db: Kysely<Database>,
  features: StoreFeatures,
): UsageRepository {
  const on = queryTarget(db, features);
  /**
   * The reservation: inserts the month's row with 1, or adds 1 to it, only where `room`
   * says so (a first request of the month against the counts 0 and 0).
   */
  const monthUpsert = (p: Param) => {
    const zero = sql.lit(0);
    const first = room(zero, zero, p);
    return db
      .insertInto('usage')
      .columns(['key_id', 'month', 'used', 'minute', 'minute_used'])
      .expression(
        db
          .selectNoFrom((eb) => [
            eb.cast<string>(eb.val(p<string>('keyId')), 'text').as('key_id'),
            eb.cast<string>(eb.val(p<string>('month')), 'text').as('month'),
            eb.lit(1).as('used'),
            eb.cast<number>(eb.val(p<number>('minute')), 'integer').as('minute'),
            eb.lit(1).as('minute_used'),
          ])
          .where((eb) => eb.and([first.month, first.minute])),
      )
      .onConflict((oc) =>
        oc
          .columns(['key_id', 'month'])
          .doUpdateSet((eb) => ({
            used: eb('usage.used', '+', 1),
            minute_used: sql<number>`${minuteCount(eb.ref('usage.minute'), eb.ref('usage.minute_used'), p)} + 1`,
            minute: eb.ref('excluded.minute'),
          }))
          .where((eb) => {
            const now = minuteCount(eb.ref('usage.minute'), eb.ref('usage.minute_used'), p);
            const found = room(eb.ref('usage.used'), now, p);
            return eb.and([found.month, found.minute]);
          }),
      );
  };

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

  /**
   * The reservation's statement, and the day's write that follows an admitted one where the
   * statement cannot carry it: with data-modifying CTEs the day rides in the statement
   * (inserted only when the month's upsert admitted the request).
   */
  const reservation: {
    readonly query: PreparedQuery<ReserveParams, CountsRow>;
    readonly day?: PreparedQuery<KeyDay, unknown>;
  } = features.writingCtes
    ? {
        query: prepareQuery<ReserveParams, CountsRow>(
          (p) =>
            db
              .with('admitted', () => monthUpsert(p).returning(['key_id', 'used', 'minute_used']))
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
              )
              .selectFrom('admitted')
              .select(['used', 'minute_used']),
          usageLock,
        ),
      }
    : {
        query: prepareQuery<ReserveParams, CountsRow>((p) =>
          monthUpsert(p).returning(['used', 'minute_used']),
        ),
        day: dayCountQuery,
      };

  const standingQuery = prepareQuery<
    LimitParams,
    { used: number; minute_used: number; month_room: unknown; minute_room: unknown }
  >((p) =>
    db
      .selectFrom(db.selectNoFrom((eb) => eb.lit(1).as('one')).as('k'))
      .leftJoin('usage', (join) =>
        join.on('usage.key_id', '=', p<string>('keyId')).on('usage.month', '=', p<string>('month')),
      )
      .select((eb) => {
        const used = eb.fn.coalesce('usage.used', eb.lit(0));
        const now = minuteCount(eb.ref('usage.minute'), eb.ref('usage.minute_used'), p);
        const found = room(used, now, p);
        return [
          used.as('used'),
          now.as('minute_used'),
          found.month.as('month_room'),
          found.minute.as('minute_room'),
        ];
      }),
  );

  async function standing(limits: LimitsAt): Promise<Standing> {
    const found = (await standingQuery(on, limitParams(limits))).rows[0];
    const used = Number(found?.used ?? 0);
    const minuteUsed = Number(found?.minute_used ?? 0);
    // SQLite answers 0 or 1, PostgreSQL false or true.
    const refusedBy = !truthy(found?.month_room)
      ? 'month'
      : !truthy(found?.minute_room)
        ? 'minute'
        : undefined;
    return { used, minuteUsed, refusedBy };
  }

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
  const refundReturningQuery = prepareQuery<RefundParams, { key_id: string }>((p) =>
    monthRefund(p).returning('key_id'),
  );
  const dayRefundQuery = prepareQuery<KeyDay, unknown>((p) =>
    db
      .updateTable('usage_days')
      .set((eb) => ({ used: eb('used', '-', 1) }))
      .where('key_id', '=', p<string>('keyId'))
      .where('day', '=', p<string>('day'))
      .where('used', '>', 0),
  );
  type HangUpParams = KeyMonth & KeyDay & { minute: number; free: number };
  /** The minute's hang-ups before this one, on the row (a new minute starts at 0). */
  const hangupsBefore = (eb: ExpressionBuilder<Database, 'usage'>, p: Param) =>
    eb.case().when('hangup_minute', '=', p<number>('minute')).then(eb.ref('hangups')).else(0).end();
  const monthHangUp = (p: Param) =>
    db
      .updateTable('usage')
      .set((eb) => ({
        used: eb
          .case()
          .when(hangupsBefore(eb, p), '<', p<number>('free'))
          .then(eb('used', '-', 1))
          .else(eb.ref('used'))
          .end(),
        hangups: eb(hangupsBefore(eb, p), '+', 1),
        hangup_minute: p<number>('minute'),
      }))
      .where('key_id', '=', p<string>('keyId'))
      .where('month', '=', p<string>('month'))
      .where('used', '>', 0);
  const hangUpQuery = prepareQuery<HangUpParams, unknown>((p) => monthHangUp(p), usageLock);
  const hangUpReturningQuery = prepareQuery<HangUpParams, { hangups: number }>((p) =>
    monthHangUp(p).returning('hangups'),
  );
  // After the month's row counted the hang-up: its day is given back when the month was.
  const dayHangUpQuery = prepareQuery<HangUpParams, unknown>((p) =>
    db
      .updateTable('usage_days')
      .set((eb) => ({ used: eb('used', '-', 1) }))
      .where('key_id', '=', p<string>('keyId'))
      .where('day', '=', p<string>('day'))
      .where('used', '>', 0)
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('usage')
            .select(sql.lit(1).as('one'))
            .where('usage.key_id', '=', p<string>('keyId'))
            .where('usage.month', '=', p<string>('month'))
            .where('usage.hangup_minute', '=', p<number>('minute'))
            .where('usage.hangups', '<=', p<number>('free')),
        ),
      ),
  );
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
    const found = (await rowQuery(on, { keyId, month })).rows[0];
    return {
      keyId,
      month,
      used: found ? Number(found.used) : 0,
      minute: found ? Number(found.minute) : 0,
      minuteUsed: found ? Number(found.minute_used) : 0,
    };
  }

  return {
    async reserve(request) {
      const params: ReserveParams = Object.assign(limitParams(request), { day: request.day });
      const { watch, also } = request;
      const then = (rows: readonly CountsRow[]): readonly BoundQuery[] => {
        const first = rows[0];
        if (first === undefined) return [];
        const used = Number(first.used);
        const day = reservation.day?.bind(params);
        const recorded = watch.includes(used) ? request.record(used) : undefined;
        return [...(day ? [day] : []), ...UnitOfWork.gather(recorded, also)];
      };
      // The statement alone where nothing has to commit with it.
      const alone = reservation.day === undefined && watch.length === 0 && also === undefined;
      const rows = alone
        ? (await reservation.query(on, params)).rows
        : await runAtomically(on, reservation.query.bind(params), then);
      const first = rows[0];
      if (first !== undefined) {
        return { admitted: true, used: Number(first.used), minuteUsed: Number(first.minute_used) };
      }
      // Refused: why, from the row as it is now (a refund since may have made room again,
      // then the minute, which is what is contended, is named).
      const now = await standing(request);
      return {
        admitted: false,
        refusedBy: now.refusedBy ?? 'minute',
        used: now.used,
        minuteUsed: now.minuteUsed,
      };
    },

    standing,

    async refund(keyId, month, minute = -1, day) {
      if (day === undefined) {
        await refundQuery(on, { keyId, month, minute });
        return;
      }
      await runAtomically(on, refundReturningQuery.bind({ keyId, month, minute }), (rows) =>
        rows.length > 0 ? [dayRefundQuery.bind({ keyId, day })] : [],
      );
    },

    refundWrites(keyId, { month, minute, day }) {
      return (work) => {
        UnitOfWork.add(work, refundQuery.bind({ keyId, month, minute }));
        UnitOfWork.add(work, dayRefundQuery.bind({ keyId, day }));
      };
    },

    async hangUp(keyId, { month, minute, day }, free) {
      const params = { keyId, month, minute, day, free };
      await runAtomically(on, hangUpReturningQuery.bind(params), (rows) => {
        const counted = rows[0];
        return counted !== undefined && Number(counted.hangups) <= free
          ? [dayHangUpQuery.bind(params)]
          : [];
      });
    },

    hangUpWrites(keyId, { month, minute, day }, free) {
      const params = { keyId, month, minute, day, free };
      return (work) => {
        UnitOfWork.add(work, hangUpQuery.bind(params));
        UnitOfWork.add(work, dayHangUpQuery.bind(params));
      };
    },

    async used(keyId, month) {
      return (await row(keyId, month)).used;
    },

    row,

    async forKeys(month, keyIds) {
      if (keyIds.length === 0) return [];
      const rows = await db
        .selectFrom('usage')
        .select(['key_id', 'month', 'used', 'minute', 'minute_used'])
        .where('month', '=', month)
        .where('key_id', 'in', keyIds)
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
      const { rows } = await daysQuery(on, { keyId, day: first, last });
      return rows.map((r) => ({ day: r.day, used: Number(r.used) }));
    },
  };
}

/** A boolean as the database answers it: SQLite 0 or 1, PostgreSQL false or true. */
function truthy(value: unknown): boolean {
  return value === true || Number(value) === 1;
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
