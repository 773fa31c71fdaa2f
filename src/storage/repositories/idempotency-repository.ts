/**
 * @module storage/repositories/idempotency-repository
 * Claims and kept outcomes of `Idempotency-Key` requests, always addressed by (API key id,
 * hashed idempotency key): one key can never reach another key's outcomes.
 */
import type { Kysely } from 'kysely';
import type { StoreFeatures } from '../dialect.js';
import { prepareQuery, type WriteStep } from '../prepared-query.js';
import type { Database } from '../schema.js';
import { type StoredSealed, sealedColumn } from '../sealed-column.js';

interface IdempotencyRecord {
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

export interface IdempotencyRepository {
  /**
   * Claims the key if it is free or its record has expired (one statement); otherwise
   * returns the live record, or undefined when it vanished meanwhile (ask again).
   */
  claim(
    claim: IdempotencyClaim,
  ): Promise<{ claimed: true } | { claimed: false; record?: IdempotencyRecord }>;
  /** The write that turns a claim into a kept outcome, to commit with other writes. */
  completion(ref: ClaimRef, sealedOutcome: Buffer, keepUntil: number): WriteStep;
  /** Keeps an outcome on its own (no other write goes with it). */
  complete(ref: ClaimRef, sealedOutcome: Buffer, keepUntil: number): Promise<void>;
  /** Gives up a claim whose request failed: the next request with the key runs afresh. */
  release(ref: ClaimRef): Promise<void>;
  /** Deletes expired records; returns how many. */
  sweep(now: number): Promise<number>;
}

export interface ClaimRef {
  readonly keyId: string;
  readonly keyHash: string;
  readonly claim: string;
}

type Ref = { keyId: string; keyHash: string };

export function createIdempotencyRepository(
  db: Kysely<Database>,
  features: StoreFeatures,
): IdempotencyRepository {
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
          }))
          // Only a record past its TTL (or a claim past its lease) is taken over.
          .where('idempotency_keys.expires_at', '<=', p<number>('now')),
      )
      .returning('claim'),
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
      .where('claim', '=', p<string>('claim')),
  );
  const releaseQuery = prepareQuery<Ref & { claim: string }, unknown>((p) =>
    db
      .deleteFrom('idempotency_keys')
      .where('key_id', '=', p<string>('keyId'))
      .where('key_hash', '=', p<string>('keyHash'))
      .where('claim', '=', p<string>('claim'))
      .where('outcome', 'is', null),
  );

  const completeParams = (ref: ClaimRef, outcome: Buffer, keepUntil: number) => ({
    keyId: ref.keyId,
    keyHash: ref.keyHash,
    claim: ref.claim,
    outcome: stored(outcome),
    keepUntil,
  });

  return {
    async claim(claim) {
      const { rows } = await claimQuery(db, claim);
      if (rows.length === 1) return { claimed: true };
      const row = (await findQuery(db, claim)).rows[0];
      if (!row) return { claimed: false };
      return {
        claimed: false,
        record: {
          fingerprint: row.fingerprint,
          outcome: row.outcome,
          expiresAt: Number(row.expires_at),
        },
      };
    },

    completion(ref, outcome, keepUntil) {
      return completeQuery.bind(completeParams(ref, outcome, keepUntil));
    },

    async complete(ref, outcome, keepUntil) {
      await completeQuery(db, completeParams(ref, outcome, keepUntil));
    },

    async release(ref) {
      await releaseQuery(db, ref);
    },

    async sweep(now) {
      const result = await db
        .deleteFrom('idempotency_keys')
        .where('expires_at', '<', now)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
