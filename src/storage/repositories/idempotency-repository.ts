/**
 * @module storage/repositories/idempotency-repository
 * Claims and kept outcomes of `Idempotency-Key` requests, always addressed by (API key id,
 * hashed idempotency key): one key can never reach another key's outcomes.
 */
import type { Kysely } from 'kysely';
import type { StoreFeatures } from '../dialect.js';
import { prepareQuery, queryTarget, runAtomically } from '../prepared-query.js';
import type { Database } from '../schema.js';
import { type StoredSealed, sealedColumn } from '../sealed-column.js';
import { UnitOfWork, type Writes } from '../unit-of-work.js';
import type { CountedUnit } from './usage-repository.js';

export interface IdempotencyRecord {
  readonly fingerprint: string;
  /** Null while the request that claimed the key is still running. */
  readonly outcome: StoredSealed | null;
  readonly expiresAt: number;
}

interface IdempotencyClaim {
  readonly keyId: string;
  readonly keyHash: string;
  readonly fingerprint: string;
  readonly claim: string;
  /** The lease: after this, a claim whose request never finished may be taken over. */
  readonly leaseUntil: number;
  readonly now: number;
}

/**
 * The writes that give a claim's unit back to the counters (the usage repository's);
 * `hangUp`: its client left before delivery (see UsageRepository.hangUp).
 */
export type RefundUnit = (keyId: string, unit: CountedUnit, hangUp: boolean) => Writes;

export interface IdempotencyRepository {
  /**
   * Claims the key if it is free or its record has expired (one statement); otherwise
   * returns the live record, or undefined when it vanished meanwhile (ask again). A claim
   * taken over from a request that never finished inherits the unit that request held.
   */
  claim(
    claim: IdempotencyClaim,
  ): Promise<
    { claimed: true; inherited?: CountedUnit } | { claimed: false; record?: IdempotencyRecord }
  >;
  /** The record of the key, live or expired, without claiming it. */
  find(ref: Ref): Promise<IdempotencyRecord | undefined>;
  /** The write that records the unit a claim's reservation counted, to commit with it. */
  holding(ref: ClaimRef, unit: CountedUnit): Writes;
  /** Extends a running claim's lease (nothing once it is kept, released or taken over). */
  renew(ref: ClaimRef, leaseUntil: number): Promise<void>;
  /**
   * Gives up a claim and refunds the unit it holds, in one transaction; nothing when the
   * claim is no longer this request's (another took it over, with the unit).
   */
  refund(ref: ClaimRef, refundUnit: RefundUnit, hangUp?: boolean): Promise<void>;
  /**
   * The write that turns a claim into a kept outcome, to commit with other writes: a guard
   * (see `UnitOfWork.require`), so that the writes it goes with roll back, and their
   * transaction rejects with `GuardFailed`, when the claim is no longer this request's.
   */
  completion(ref: ClaimRef, sealedOutcome: Buffer, keepUntil: number): Writes;
  /** Keeps an outcome on its own; false when the claim is no longer this request's. */
  complete(ref: ClaimRef, sealedOutcome: Buffer, keepUntil: number): Promise<boolean>;
  /** Gives up a claim whose request failed: the next request with the key runs afresh. */
  release(ref: ClaimRef): Promise<void>;
  /**
   * Deletes expired records, refunding the unit of each claim whose lease ran out (its
   * process died and no retry took it over); returns how many.
   */
  sweep(now: number, refundUnit: RefundUnit): Promise<number>;
}

export interface ClaimRef {
  readonly keyId: string;
  readonly keyHash: string;
  readonly claim: string;
}

type Ref = { keyId: string; keyHash: string };
type UnitColumns = {
  unit_month: string | null;
  unit_minute: number | null;
  unit_day: string | null;
};

/** How many expired claims holding a unit one sweep gives back at most. */
const SWEEP_REFUNDS = 1000;

export function createIdempotencyRepository(
  db: Kysely<Database>,
  features: StoreFeatures,
): IdempotencyRepository {
  const on = queryTarget(db, features);
  const stored = sealedColumn(features);
  const claimQuery = prepareQuery<
    Ref & { fingerprint: string; claim: string; leaseUntil: number; now: number },
    { claim: string }
  >((p) =>
    db
      .insertInto('idempotency_keys')
      .values({
        key_id: p<string>('keyId'),
        key_hash: p<string>('keyHash'),
        fingerprint: p<string>('fingerprint'),
        claim: p<string>('claim'),
        outcome: null,
        expires_at: p<number>('leaseUntil'),
      })
      .onConflict((oc) =>
        oc
          .columns(['key_id', 'key_hash'])
          .doUpdateSet((eb) => ({
            fingerprint: eb.ref('excluded.fingerprint'),
            claim: eb.ref('excluded.claim'),
            outcome: null,
            expires_at: eb.ref('excluded.expires_at'),
            // A claim that never finished passes its unit on; a kept outcome's was spent.
            unit_month: eb
              .case()
              .when('idempotency_keys.outcome', 'is', null)
              .then(eb.ref('idempotency_keys.unit_month'))
              .else(null)
              .end(),
            unit_minute: eb
              .case()
              .when('idempotency_keys.outcome', 'is', null)
              .then(eb.ref('idempotency_keys.unit_minute'))
              .else(null)
              .end(),
            unit_day: eb
              .case()
              .when('idempotency_keys.outcome', 'is', null)
              .then(eb.ref('idempotency_keys.unit_day'))
              .else(null)
              .end(),
          }))
          // Only a record past its TTL (or a claim past its lease) is taken over.
          .where('idempotency_keys.expires_at', '<=', p<number>('now')),
      )
      .returning(['claim', 'unit_month', 'unit_minute', 'unit_day']),
  );
  const findQuery = prepareQuery<
    Ref,
    { fingerprint: string; outcome: StoredSealed | null; expires_at: number }
  >((p) =>
    db
      .selectFrom('idempotency_keys')
      .select(['fingerprint', 'outcome', 'expires_at'])
      .where('key_id', '=', p<string>('keyId'))
      .where('key_hash', '=', p<string>('keyHash')),
  );
  const completeQuery = prepareQuery<
    Ref & { claim: string; outcome: StoredSealed; keepUntil: number },
    unknown
  >((p) =>
    db
      .updateTable('idempotency_keys')
      .set({ outcome: p<StoredSealed>('outcome'), expires_at: p<number>('keepUntil') })
      .where('key_id', '=', p<string>('keyId'))
      .where('key_hash', '=', p<string>('keyHash'))
      .where('claim', '=', p<string>('claim'))
      .where('outcome', 'is', null),
  );
  const releaseQuery = prepareQuery<Ref & { claim: string }, unknown>((p) =>
    db
      .deleteFrom('idempotency_keys')
      .where('key_id', '=', p<string>('keyId'))
      .where('key_hash', '=', p<string>('keyHash'))
      .where('claim', '=', p<string>('claim'))
      .where('outcome', 'is', null),
  );

  const holdQuery = prepareQuery<
    Ref & { claim: string; month: string; minute: number; day: string },
    unknown
  >((p) =>
    db
      .updateTable('idempotency_keys')
      .set({
        unit_month: p<string>('month'),
        unit_minute: p<number>('minute'),
        unit_day: p<string>('day'),
      })
      .where('key_id', '=', p<string>('keyId'))
      .where('key_hash', '=', p<string>('keyHash'))
      .where('claim', '=', p<string>('claim')),
  );
  const renewQuery = prepareQuery<Ref & { claim: string; leaseUntil: number }, unknown>((p) =>
    db
      .updateTable('idempotency_keys')
      .set({ expires_at: p<number>('leaseUntil') })
      .where('key_id', '=', p<string>('keyId'))
      .where('key_hash', '=', p<string>('keyHash'))
      .where('claim', '=', p<string>('claim'))
      .where('outcome', 'is', null),
  );
  /** Deletes a running claim (one that ran out, for the sweep), returning its unit. */
  const giveUpQuery = prepareQuery<Ref & { claim: string; before: number }, UnitColumns>((p) =>
    db
      .deleteFrom('idempotency_keys')
      .where('key_id', '=', p<string>('keyId'))
      .where('key_hash', '=', p<string>('keyHash'))
      .where('claim', '=', p<string>('claim'))
      .where('outcome', 'is', null)
      .where('expires_at', '<=', p<number>('before'))
      .returning(['unit_month', 'unit_minute', 'unit_day']),
  );
  const giveUp = (
    ref: ClaimRef,
    before: number,
    refundUnit: RefundUnit,
    hangUp = false,
  ): Promise<readonly UnitColumns[]> =>
    runAtomically(on, giveUpQuery.bind(Object.assign({ before }, ref)), (rows) => {
      const unit = unitOf(rows[0]);
      return unit === undefined ? [] : UnitOfWork.gather(refundUnit(ref.keyId, unit, hangUp));
    });

  async function find(ref: Ref): Promise<IdempotencyRecord | undefined> {
    const row = (await findQuery(on, ref)).rows[0];
    if (!row) return undefined;
    return {
      fingerprint: row.fingerprint,
      outcome: row.outcome,
      expiresAt: Number(row.expires_at),
    };
  }

  const completeParams = (ref: ClaimRef, outcome: Buffer, keepUntil: number) => ({
    keyId: ref.keyId,
    keyHash: ref.keyHash,
    claim: ref.claim,
    outcome: stored(outcome),
    keepUntil,
  });

  return {
    async claim(claim) {
      const { rows } = await claimQuery(on, claim);
      if (rows.length === 1) {
        const inherited = unitOf(rows[0] as unknown as UnitColumns);
        return inherited === undefined ? { claimed: true } : { claimed: true, inherited };
      }
      const record = await find(claim);
      return record === undefined ? { claimed: false } : { claimed: false, record };
    },

    find,

    holding(ref, unit) {
      const { keyId, keyHash, claim } = ref;
      const hold = holdQuery.bind({ keyId, keyHash, claim, ...unit });
      return (work) => UnitOfWork.add(work, hold);
    },

    async renew(ref, leaseUntil) {
      await renewQuery(on, {
        keyId: ref.keyId,
        keyHash: ref.keyHash,
        claim: ref.claim,
        leaseUntil,
      });
    },

    async refund(ref, refundUnit, hangUp) {
      await giveUp(ref, Number.MAX_SAFE_INTEGER, refundUnit, hangUp);
    },

    completion(ref, outcome, keepUntil) {
      const complete = completeQuery.bind(completeParams(ref, outcome, keepUntil));
      return (work) => UnitOfWork.require(work, complete);
    },

    async complete(ref, outcome, keepUntil) {
      const result = await completeQuery(on, completeParams(ref, outcome, keepUntil));
      return Number(result.numAffectedRows ?? 0) > 0;
    },

    async release(ref) {
      await releaseQuery(on, ref);
    },

    async sweep(now, refundUnit) {
      // Each claim on its own: a retry taking it over at the same time wins or loses whole.
      const holding = await db
        .selectFrom('idempotency_keys')
        .select(['key_id', 'key_hash', 'claim'])
        .where('expires_at', '<', now)
        .where('outcome', 'is', null)
        .where('unit_month', 'is not', null)
        .limit(SWEEP_REFUNDS)
        .execute();
      let refunded = 0;
      for (const row of holding) {
        const ref = { keyId: row.key_id, keyHash: row.key_hash, claim: row.claim };
        refunded += (await giveUp(ref, now - 1, refundUnit)).length;
      }
      const result = await db
        .deleteFrom('idempotency_keys')
        .where('expires_at', '<', now)
        .where((eb) => eb.or([eb('outcome', 'is not', null), eb('unit_month', 'is', null)]))
        .executeTakeFirst();
      return refunded + Number(result.numDeletedRows);
    },
  };
}

/** A claim's unit, when it holds one. */
function unitOf(row: UnitColumns | undefined): CountedUnit | undefined {
  if (row?.unit_month == null || row.unit_minute == null || row.unit_day == null) return undefined;
  return { month: row.unit_month, minute: Number(row.unit_minute), day: row.unit_day };
}
