/**
 * @module storage/repositories/events-repository
 * The events outbox and the receivers' state. Instances claim due events with a lease
 * (one conditional update; on PostgreSQL it skips rows another instance is claiming), so
 * each attempt is made by one instance; a claim whose instance died runs out and the
 * event is taken over. Only the claimant records the outcome of its attempt.
 */
import type { Kysely } from 'kysely';
import type { StoreFeatures } from '../dialect.js';
import { prepareQuery } from '../prepared-query.js';
import type { Database, WebhookEventsTable } from '../schema.js';
import { UnitOfWork, type Writes } from '../unit-of-work.js';

export type EventStatus = 'pending' | 'delivered' | 'failed';
const EVENT_STATUSES: readonly EventStatus[] = ['pending', 'delivered', 'failed'];

interface NewEventRow {
  readonly id: string;
  readonly type: string;
  readonly dedupeKey: string | null;
  readonly payload: string;
  readonly createdAt: number;
}

export interface ClaimedEvent {
  readonly id: string;
  readonly type: string;
  readonly payload: string;
  readonly createdAt: number;
  /** Attempts made before this one. */
  readonly attempts: number;
}

interface EventRecord extends ClaimedEvent {
  readonly status: EventStatus;
  readonly nextAttemptAt: number;
  readonly lastAttemptAt: number | null;
  readonly lastStatus: number | null;
  readonly lastError: string | null;
  readonly deliveredAt: number | null;
}

interface AttemptOutcome {
  readonly now: number;
  /** The receiver's HTTP status; undefined when none came back. */
  readonly status: number | undefined;
  readonly error: string | undefined;
}

export interface EventsRepository {
  /** The insert to commit with the change that causes the event (skipped if a dedupe twin exists). */
  insertion(event: NewEventRow): Writes;
  /** Claims up to `limit` due events until `leaseUntil` for `claim`. */
  claimDue(now: number, leaseUntil: number, claim: string, limit: number): Promise<ClaimedEvent[]>;
  delivered(id: string, claim: string, outcome: AttemptOutcome): Promise<void>;
  /** A failed attempt: retry at `nextAttemptAt`, or give up (`failed`) when undefined. */
  attemptFailed(
    id: string,
    claim: string,
    outcome: AttemptOutcome,
    nextAttemptAt: number | undefined,
  ): Promise<void>;
  /** Gives a claim back without an outcome (the attempt was cut short by a shutdown). */
  release(id: string, claim: string): Promise<void>;
  list(filter: { status?: EventStatus; limit: number }): Promise<EventRecord[]>;
  counts(): Promise<Record<EventStatus, number>>;
  receiverState(url: string): Promise<{ disabledAt: number; reason: string } | undefined>;
  disableReceiver(url: string, now: number, reason: string): Promise<void>;
  /** True when the receiver was disabled. */
  enableReceiver(url: string): Promise<boolean>;
  /** Deletes delivered and failed events created before `before`; returns how many. */
  sweep(before: number): Promise<number>;
}

/** Longest error text kept: enough for a status line or an error code. */
const ERROR_MAX = 200;

export function createEventsRepository(
  db: Kysely<Database>,
  features: StoreFeatures,
): EventsRepository {
  const insertQuery = prepareQuery<
    { id: string; type: string; dedupeKey: string | null; payload: string; createdAt: number },
    unknown
  >((p) =>
    db
      .insertInto('webhook_events')
      .values({
        id: p<string>('id'),
        type: p<string>('type'),
        dedupe_key: p<string | null>('dedupeKey'),
        payload: p<string>('payload'),
        created_at: p<number>('createdAt'),
        status: 'pending',
        attempts: 0,
        next_attempt_at: p<number>('createdAt'),
      })
      .onConflict((oc) => oc.column('dedupe_key').doNothing()),
  );

  const finish = (id: string, claim: string) =>
    db
      .updateTable('webhook_events')
      .where('id', '=', id)
      .where('claim', '=', claim)
      .where('status', '=', 'pending');

  return {
    insertion: (event) => (work) => UnitOfWork.add(work, insertQuery.bind(event)),

    async claimDue(now, leaseUntil, claim, limit) {
      const free = db
        .selectFrom('webhook_events')
        .select('id')
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
        .orderBy('next_attempt_at')
        .limit(limit);
      const rows = await db
        .updateTable('webhook_events')
        .set({ claim, claimed_until: leaseUntil })
        .where('id', 'in', features.skipLocked ? free.forUpdate().skipLocked() : free)
        // Checked again on the row itself: a claim that won meanwhile is not taken over.
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
        .returning(['id', 'type', 'payload', 'created_at', 'attempts'])
        .execute();
      return rows.map((row) => ({
        id: row.id,
        type: row.type,
        payload: row.payload,
        createdAt: Number(row.created_at),
        attempts: Number(row.attempts),
      }));
    },

    async delivered(id, claim, outcome) {
      await finish(id, claim)
        .set((eb) => ({
          status: 'delivered',
          attempts: eb('attempts', '+', 1),
          claim: null,
          claimed_until: null,
          last_attempt_at: outcome.now,
          last_status: outcome.status ?? null,
          last_error: null,
          delivered_at: outcome.now,
        }))
        .execute();
    },

    async attemptFailed(id, claim, outcome, nextAttemptAt) {
      await finish(id, claim)
        .set((eb) => ({
          status: nextAttemptAt === undefined ? 'failed' : 'pending',
          attempts: eb('attempts', '+', 1),
          next_attempt_at: nextAttemptAt ?? outcome.now,
          claim: null,
          claimed_until: null,
          last_attempt_at: outcome.now,
          last_status: outcome.status ?? null,
          last_error: outcome.error?.slice(0, ERROR_MAX) ?? null,
        }))
        .execute();
    },

    async release(id, claim) {
      await finish(id, claim).set({ claim: null, claimed_until: null }).execute();
    },

    async list({ status, limit }) {
      let query = db
        .selectFrom('webhook_events')
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(limit);
      if (status !== undefined) query = query.where('status', '=', status);
      return (await query.execute()).map(toEventRecord);
    },

    async counts() {
      const rows = await db
        .selectFrom('webhook_events')
        .select((eb) => ['status', eb.fn.countAll<number>().as('count')])
        .groupBy('status')
        .execute();
      const counts: Record<EventStatus, number> = { pending: 0, delivered: 0, failed: 0 };
      for (const row of rows) {
        if (isStatus(row.status)) counts[row.status] = Number(row.count);
      }
      return counts;
    },

    async receiverState(url) {
      const row = await db
        .selectFrom('webhook_receivers')
        .select(['disabled_at', 'reason'])
        .where('url', '=', url)
        .executeTakeFirst();
      return row && { disabledAt: Number(row.disabled_at), reason: row.reason };
    },

    async disableReceiver(url, now, reason) {
      await db
        .insertInto('webhook_receivers')
        .values({ url, disabled_at: now, reason: reason.slice(0, ERROR_MAX) })
        .onConflict((oc) => oc.column('url').doNothing())
        .execute();
    },

    async enableReceiver(url) {
      const result = await db
        .deleteFrom('webhook_receivers')
        .where('url', '=', url)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async sweep(before) {
      const result = await db
        .deleteFrom('webhook_events')
        .where('status', 'in', ['delivered', 'failed'])
        .where('created_at', '<', before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

function isStatus(status: string): status is EventStatus {
  return (EVENT_STATUSES as readonly string[]).includes(status);
}

function toEventRecord(row: WebhookEventsTable): EventRecord {
  const nullableNumber = (value: number | null) => (value === null ? null : Number(value));
  return {
    id: row.id,
    type: row.type,
    payload: row.payload,
    createdAt: Number(row.created_at),
    attempts: Number(row.attempts),
    status: isStatus(row.status) ? row.status : 'pending',
    nextAttemptAt: Number(row.next_attempt_at),
    lastAttemptAt: nullableNumber(row.last_attempt_at),
    lastStatus: nullableNumber(row.last_status),
    lastError: row.last_error,
    deliveredAt: nullableNumber(row.delivered_at),
  };
}
