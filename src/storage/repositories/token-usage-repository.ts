/**
 * @module storage/repositories/token-usage-repository
 * Tokens per (key id, month), and per clock minute on the same row, with each turn's open
 * reservation beside them (docs/quota-and-limits.md, "Token budgets"). A row's `used` counts
 * settled tokens and reserved ones together, so the conditional upsert of `reserve`, one
 * atomic statement, admits a turn's worst case only while both budgets have room for it:
 * under any concurrency, on any number of instances, a key's tokens never pass its budget.
 * Settling replaces a reservation by what the turn cost in one transaction, which deletes the
 * reservation's row first, so a turn and a sweep can never both give it back.
 */
import { type Expression, type Kysely, sql } from 'kysely';
import type { StoreFeatures } from '../dialect.js';
import {
  type BoundQuery,
  type Param,
  prepareQuery,
  queryTarget,
  runAtomically,
} from '../prepared-query.js';
import type { Database } from '../schema.js';
import { UnitOfWork, type Writes } from '../unit-of-work.js';

/** A key's tokens at one moment: its month and clock minute, and its budgets. */
export interface TokenLimitsAt {
  readonly keyId: string;
  readonly month: string;
  /** Unix ms / 60 000. */
  readonly minute: number;
  /** Tokens per month; undefined = no monthly budget. */
  readonly limit: number | undefined;
  /** Tokens per minute; undefined = no per-minute budget. */
  readonly minuteLimit: number | undefined;
}

interface TokenReserveRequest extends TokenLimitsAt {
  /** The reservation's id (random), which settles it. */
  readonly id: string;
  readonly tokens: number;
  /** Unix ms after which a sweep may release it. */
  readonly expiresAt: number;
  /** Writes committed with an admitted reservation, given the month's count it brings (events). */
  readonly record?: (used: number) => Writes | undefined;
}

/** An open reservation, as settling needs it. */
export interface OpenTokenReservation {
  readonly id: string;
  readonly keyId: string;
  readonly month: string;
  readonly minute: number;
  readonly tokens: number;
}

interface TokenStanding {
  readonly used: number;
  readonly minuteUsed: number;
  /** Which budget has no room for `tokens` more (the month first); undefined = both have. */
  readonly refusedBy: 'month' | 'minute' | undefined;
}

type TokenReserveOutcome =
  | { readonly admitted: true; readonly used: number; readonly minuteUsed: number }
  | ({ readonly admitted: false; readonly refusedBy: 'month' | 'minute' } & TokenStanding);

interface TokenUsageRow {
  readonly keyId: string;
  readonly month: string;
  readonly used: number;
}

export interface TokenUsageRepository {
  /** Counts `tokens` and records the reservation if both budgets have room; else nothing. */
  reserve(request: TokenReserveRequest): Promise<TokenReserveOutcome>;
  /** The counts now, and which budget has no room for `tokens` more. */
  standing(limits: TokenLimitsAt, tokens: number): Promise<TokenStanding>;
  /**
   * Replaces the reservation by `tokens` (0 releases it). When a sweep released it already,
   * `tokens` is added to the month as it is: the turn delivered them. True when it was open.
   */
  settle(reservation: OpenTokenReservation, tokens: number): Promise<boolean>;
  /** Up to `limit` reservations whose expiry has passed. */
  expired(now: number, limit: number): Promise<OpenTokenReservation[]>;
  /** Reservations still open (all keys), for tests and the admin API. */
  open(keyId?: string): Promise<number>;
  forMonth(month: string): Promise<TokenUsageRow[]>;
  forKey(keyId: string): Promise<TokenUsageRow[]>;
}

/** "No budget": above any count. */
const NO_LIMIT = 9_000_000_000_000_000;

type Params = {
  keyId: string;
  month: string;
  minute: number;
  tokens: number;
  limit: number;
  minuteLimit: number;
};

const big = (value: Expression<number> | number) => sql<number>`cast(${value} as bigint)`;

/** The row's count of the request's minute (parameter `minute`): a new minute starts at 0. */
const minuteCount = (minute: Expression<number>, minuteUsed: Expression<number>, p: Param) =>
  sql<number>`case when ${minute} = ${big(p<number>('minute'))} then ${minuteUsed} else 0 end`;

/** The rule: `tokens` more fit in the month and in the minute. */
function room(used: Expression<number>, minuteUsed: Expression<number>, p: Param) {
  const tokens = big(p<number>('tokens'));
  return {
    month: sql<boolean>`${used} + ${tokens} <= ${big(p<number>('limit'))}`,
    minute: sql<boolean>`${minuteUsed} + ${tokens} <= ${big(p<number>('minuteLimit'))}`,
  };
}

export function createTokenUsageRepository(
  db: Kysely<Database>,
  features: StoreFeatures,
): TokenUsageRepository {
  const on = queryTarget(db, features);

  const reserveQuery = prepareQuery<Params, { used: number; minute_used: number }>((p) => {
    const zero = sql<number>`0`;
    const first = room(zero, zero, p);
    return db
      .insertInto('token_usage')
      .columns(['key_id', 'month', 'used', 'minute', 'minute_used'])
      .expression(
        db
          .selectNoFrom((eb) => [
            eb.cast<string>(eb.val(p<string>('keyId')), 'text').as('key_id'),
            eb.cast<string>(eb.val(p<string>('month')), 'text').as('month'),
            big(p<number>('tokens')).as('used'),
            eb.cast<number>(eb.val(p<number>('minute')), 'integer').as('minute'),
            big(p<number>('tokens')).as('minute_used'),
          ])
          .where((eb) => eb.and([first.month, first.minute])),
      )
      .onConflict((oc) =>
        oc
          .columns(['key_id', 'month'])
          .doUpdateSet((eb) => ({
            used: sql<number>`${eb.ref('token_usage.used')} + ${big(p<number>('tokens'))}`,
            minute_used: sql<number>`${minuteCount(eb.ref('token_usage.minute'), eb.ref('token_usage.minute_used'), p)} + ${big(p<number>('tokens'))}`,
            minute: eb.ref('excluded.minute'),
          }))
          .where((eb) => {
            const now = minuteCount(
              eb.ref('token_usage.minute'),
              eb.ref('token_usage.minute_used'),
              p,
            );
            const found = room(eb.ref('token_usage.used'), now, p);
            return eb.and([found.month, found.minute]);
          }),
      )
      .returning(['used', 'minute_used']);
  });

  const recordQuery = prepareQuery<
    { id: string; keyId: string; month: string; minute: number; tokens: number; expiresAt: number },
    unknown
  >((p) =>
    db.insertInto('token_reservations').values({
      id: p<string>('id'),
      key_id: p<string>('keyId'),
      month: p<string>('month'),
      minute: p<number>('minute'),
      tokens: p<number>('tokens'),
      expires_at: p<number>('expiresAt'),
    }),
  );

  const standingQuery = prepareQuery<
    Params,
    { used: number; minute_used: number; month_room: unknown; minute_room: unknown }
  >((p) =>
    db
      .selectFrom(db.selectNoFrom((eb) => eb.lit(1).as('one')).as('k'))
      .leftJoin('token_usage', (join) =>
        join
          .on('token_usage.key_id', '=', p<string>('keyId'))
          .on('token_usage.month', '=', p<string>('month')),
      )
      .select((eb) => {
        const used = eb.fn.coalesce('token_usage.used', sql<number>`0`);
        const minuteUsed = eb.fn.coalesce('token_usage.minute_used', sql<number>`0`);
        const minute = eb.fn.coalesce('token_usage.minute', sql<number>`-1`);
        const now = minuteCount(minute, minuteUsed, p);
        const found = room(used, now, p);
        return [
          used.as('used'),
          now.as('minute_used'),
          found.month.as('month_room'),
          found.minute.as('minute_room'),
        ];
      }),
  );

  const takeQuery = prepareQuery<{ id: string }, { tokens: number }>((p) =>
    db.deleteFrom('token_reservations').where('id', '=', p<string>('id')).returning('tokens'),
  );

  /** Adds `delta` to the month, and to the minute while it is `minute`. */
  const adjustQuery = prepareQuery<
    { keyId: string; month: string; minute: number; delta: number },
    unknown
  >((p) =>
    db
      .updateTable('token_usage')
      .set((eb) => ({
        used: sql<number>`${eb.ref('used')} + ${big(p<number>('delta'))}`,
        minute_used: sql<number>`case when ${eb.ref('minute')} = ${big(p<number>('minute'))} and ${eb.ref('minute_used')} + ${big(p<number>('delta'))} >= 0 then ${eb.ref('minute_used')} + ${big(p<number>('delta'))} else ${eb.ref('minute_used')} end`,
      }))
      .where('key_id', '=', p<string>('keyId'))
      .where('month', '=', p<string>('month')),
  );

  const params = (limits: TokenLimitsAt, tokens: number): Params => ({
    keyId: limits.keyId,
    month: limits.month,
    minute: limits.minute,
    tokens,
    limit: limits.limit ?? NO_LIMIT,
    minuteLimit: limits.minuteLimit ?? NO_LIMIT,
  });

  async function standing(limits: TokenLimitsAt, tokens: number): Promise<TokenStanding> {
    const found = (await standingQuery(on, params(limits, tokens))).rows[0];
    const refusedBy = !truthy(found?.month_room)
      ? 'month'
      : !truthy(found?.minute_room)
        ? 'minute'
        : undefined;
    return {
      used: Number(found?.used ?? 0),
      minuteUsed: Number(found?.minute_used ?? 0),
      refusedBy,
    };
  }

  const toRow = (r: { key_id: string; month: string; used: number }): TokenUsageRow => ({
    keyId: r.key_id,
    month: r.month,
    used: Number(r.used),
  });

  return {
    async reserve(request) {
      const p = params(request, request.tokens);
      const rows = await runAtomically(on, reserveQuery.bind(p), (admitted) => {
        const counted = admitted[0];
        if (counted === undefined) return [];
        const kept = recordQuery.bind({
          id: request.id,
          keyId: request.keyId,
          month: request.month,
          minute: request.minute,
          tokens: request.tokens,
          expiresAt: request.expiresAt,
        });
        return [kept, ...UnitOfWork.gather(request.record?.(Number(counted.used)))];
      });
      const first = rows[0];
      if (first !== undefined) {
        return { admitted: true, used: Number(first.used), minuteUsed: Number(first.minute_used) };
      }
      const now = await standing(request, request.tokens);
      // Refused, yet room now: a settle since gave some back; the minute is what is contended.
      return { admitted: false, ...now, refusedBy: now.refusedBy ?? 'minute' };
    },

    standing,

    async settle(reservation, tokens) {
      let wasOpen = false;
      const { keyId, month, minute } = reservation;
      await runAtomically(on, takeQuery.bind({ id: reservation.id }), (rows): BoundQuery[] => {
        const taken = rows[0];
        wasOpen = taken !== undefined;
        // Released by a sweep already: what the turn delivered still counts (to the month).
        const delta = taken === undefined ? tokens : tokens - Number(taken.tokens);
        if (delta === 0) return [];
        return [adjustQuery.bind({ keyId, month, minute: taken ? minute : -1, delta })];
      });
      return wasOpen;
    },

    async expired(now, limit) {
      const rows = await db
        .selectFrom('token_reservations')
        .select(['id', 'key_id', 'month', 'minute', 'tokens'])
        .where('expires_at', '<', now)
        .orderBy('expires_at')
        .limit(limit)
        .execute();
      return rows.map((r) => ({
        id: r.id,
        keyId: r.key_id,
        month: r.month,
        minute: Number(r.minute),
        tokens: Number(r.tokens),
      }));
    },

    async open(keyId) {
      let query = db
        .selectFrom('token_reservations')
        .select((eb) => eb.fn.countAll<number>().as('count'));
      if (keyId !== undefined) query = query.where('key_id', '=', keyId);
      const row = await query.executeTakeFirst();
      return Number(row?.count ?? 0);
    },

    async forMonth(month) {
      const rows = await db
        .selectFrom('token_usage')
        .select(['key_id', 'month', 'used'])
        .where('month', '=', month)
        .execute();
      return rows.map(toRow);
    },

    async forKey(keyId) {
      const rows = await db
        .selectFrom('token_usage')
        .select(['key_id', 'month', 'used'])
        .where('key_id', '=', keyId)
        .orderBy('month')
        .execute();
      return rows.map(toRow);
    },
  };
}

/** A boolean as the database answers it: SQLite 0 or 1, PostgreSQL false or true. */
function truthy(value: unknown): boolean {
  return value === true || Number(value) === 1;
}
