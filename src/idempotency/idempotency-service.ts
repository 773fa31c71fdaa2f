/**
 * @module idempotency/idempotency-service
 * Idempotent retries (docs/contract.md, "Idempotent retries"). A request with an `Idempotency-Key`
 * that will run the core claims it; its reply is sealed and kept for the TTL, scoped to the
 * API key's id; a repeat with the same endpoint and body gets that reply again, another
 * body or endpoint is refused, and a repeat while the first still runs (on any instance)
 * is told to come back. Outcomes that are not kept (soft errors, failures, refusals) leave
 * no row: a request that will not reach the core only looks the key up, and a claim whose
 * request did not reply is given up.
 *
 * A claim holds a lease that its process renews while the request runs; a process that
 * died stops renewing, so a retry may take the key over once the lease has passed. The
 * claim records the quota unit its request reserved (in the reservation's transaction): a
 * retry that takes it over inherits that unit instead of reserving another, a claim given
 * up refunds it in the transaction that deletes the row, and the sweep refunds the units
 * of dead claims nobody took over. So a request answered once is charged once, crashes
 * included.
 */
import { randomUUID } from 'node:crypto';
import type { CoreFinish, Language, TokenUsage } from '../core/core-adapter.js';
import type { SoftErrorCode } from '../errors/error-codes.js';
import type { ProblemDetail } from '../errors/problem-detail.js';
import type { TurnSealer } from '../sessions/turn-sealer.js';
import { GuardFailed } from '../storage/prepared-query.js';
import type {
  ClaimRef,
  IdempotencyRecord,
  IdempotencyRepository,
  RefundUnit,
} from '../storage/repositories/idempotency-repository.js';
import type { CountedUnit } from '../storage/repositories/usage-repository.js';
import type { Writes } from '../storage/unit-of-work.js';

/** What a repeat gets back: enough to render the first answer again, byte for byte. */
export type KeptOutcome =
  | {
      readonly kind: 'reply';
      readonly reply: string;
      readonly language: Language;
      /** The token counts the answer showed (`/v1` shows them; absent in older outcomes). */
      readonly usage?: TokenUsage;
      /** How the answer ended when it was more than text (tool calls). */
      readonly finish?: CoreFinish;
      readonly turnId: string;
      readonly createdAt: number;
    }
  | {
      readonly kind: 'soft_error';
      readonly code: SoftErrorCode;
      /** What the front door named as the problem (`/v1`'s parameter and message). */
      readonly detail?: ProblemDetail;
      readonly language: Language;
      readonly turnId: string;
      readonly createdAt: number;
    };

/** Where and with what a key was used: a repeat must match it. */
export interface RequestFingerprint {
  /** The front door and its variant, e.g. `/api/chat`. */
  readonly endpoint: string;
  /** The request body exactly as received. */
  readonly body: Uint8Array | string;
}

/** What an earlier request with the same key decides for this one. */
export type EarlierRequest =
  | { readonly kind: 'replay'; readonly outcome: KeptOutcome }
  | { readonly kind: 'in_flight' }
  | { readonly kind: 'reused' };

type ClaimResult = { readonly kind: 'claimed'; readonly claim: Claim } | EarlierRequest;

/**
 * The quota unit of a claimed request, for the quota's reservation: the one inherited from
 * a dead request with the same key, or the write that records a new one with the claim.
 */
interface ClaimedUnit {
  /** The inherited unit, once: the reservation that adopts it refunds it or lets it count. */
  adopt(): CountedUnit | undefined;
  /** The write that records `unit` with the claim, committed with its reservation. */
  holding(unit: CountedUnit): Writes;
  /**
   * Gives the claim up and its unit back, together (`hangUp`: as a hang-up's, see
   * QuotaService's `Reservation.refund`). Never throws.
   */
  refund(options?: { readonly hangUp?: boolean }): Promise<void>;
}

export interface Claim {
  /**
   * The write that keeps `outcome`, to commit together with the turn it answers; when the
   * claim was taken over meanwhile, nothing of that transaction commits and it rejects with
   * an error `claimTakenOver` recognises (docs/contract.md, "The client goes away": fencing).
   */
  keep(outcome: KeptOutcome): Writes;
  /** Keeps `outcome` on its own; false when the claim was taken over meanwhile. */
  keepNow(outcome: KeptOutcome): Promise<boolean>;
  /**
   * The outcome is not kept: the next request with this key runs afresh. A unit reserved
   * for it stays as its reservation left it; an inherited unit no reservation adopted is
   * refunded. Never throws.
   */
  release(): Promise<void>;
  readonly unit: ClaimedUnit;
  /** The request is done: its lease is no longer renewed. */
  close(): void;
}

export interface IdempotencyService {
  claim(
    keyId: string,
    idempotencyKey: string,
    request: RequestFingerprint,
    nowMs: number,
  ): Promise<ClaimResult>;
  /**
   * What an earlier request with this key decides, without claiming it (for a request that
   * will not reach the core); undefined when there is none, or only an expired one.
   */
  earlier(
    keyId: string,
    idempotencyKey: string,
    request: RequestFingerprint,
    nowMs: number,
  ): Promise<EarlierRequest | undefined>;
  sweep(nowMs: number): Promise<number>;
}

export interface IdempotencyOptions {
  /** How long a kept outcome is replayed. */
  readonly ttlMs: number;
  /** How long a claim holds without being renewed; it is renewed every third of it. */
  readonly leaseMs: number;
  /** The clock the lease is renewed by. */
  readonly clock: () => number;
  /** The counters' writes that refund a claim's unit. */
  readonly refundUnit: RefundUnit;
}

/** A key claimed, released and claimed again meanwhile is asked about a few times at most. */
const CLAIM_ATTEMPTS = 3;

export function createIdempotencyService(
  repository: IdempotencyRepository,
  sealer: TurnSealer,
  options: IdempotencyOptions,
): IdempotencyService {
  const binding = (keyId: string, keyHash: string) => `${keyId}\0${keyHash}\0idempotency`;

  const { leaseMs, clock, refundUnit } = options;

  function claimOf(ref: ClaimRef, nowMs: number, inherited: CountedUnit | undefined): Claim {
    const keepUntil = nowMs + options.ttlMs;
    const seal = (outcome: KeptOutcome) =>
      sealer.sealJson(outcome, binding(ref.keyId, ref.keyHash));
    // A renewal that fails is tried again at the next beat; a lease lost is a retry let in.
    const renewal = setInterval(
      () => void repository.renew(ref, clock() + leaseMs).catch(() => {}),
      Math.max(1, Math.floor(leaseMs / 3)),
    );
    renewal.unref();
    const close = () => clearInterval(renewal);
    let unadopted = inherited;
    // A claim that cannot be given up runs out with its lease; the sweep refunds its unit.
    const refund = (how?: { readonly hangUp?: boolean }) => {
      close();
      return repository.refund(ref, refundUnit, how?.hangUp === true).catch(() => {});
    };
    return {
      keep: (outcome) => repository.completion(ref, seal(outcome), keepUntil),
      keepNow: (outcome) => repository.complete(ref, seal(outcome), keepUntil),
      release: () => {
        close();
        if (unadopted !== undefined) return refund();
        return repository.release(ref).catch(() => {});
      },
      unit: {
        adopt() {
          const unit = unadopted;
          unadopted = undefined;
          return unit;
        },
        holding: (unit) => repository.holding(ref, unit),
        refund,
      },
      close,
    };
  }

  /** The decision an earlier request's live record makes. */
  function decided(
    record: IdempotencyRecord,
    keyId: string,
    keyHash: string,
    fingerprint: string,
  ): EarlierRequest {
    if (record.fingerprint !== fingerprint) return { kind: 'reused' };
    if (record.outcome === null) return { kind: 'in_flight' };
    const outcome = sealer.openJson(record.outcome, binding(keyId, keyHash));
    // An outcome that does not open (another secret) is treated as never kept.
    if (isKeptOutcome(outcome)) return { kind: 'replay', outcome };
    return { kind: 'in_flight' };
  }

  const hashes = (keyId: string, idempotencyKey: string, request: RequestFingerprint) => ({
    keyHash: sealer.digest('idempotency key', keyId, idempotencyKey),
    fingerprint: sealer.digest('request', keyId, request.endpoint, request.body),
  });

  return {
    async claim(keyId, idempotencyKey, request, nowMs) {
      const { keyHash, fingerprint } = hashes(keyId, idempotencyKey, request);
      const claim = randomUUID();
      for (let attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
        const result = await repository.claim({
          keyId,
          keyHash,
          fingerprint,
          claim,
          leaseUntil: nowMs + leaseMs,
          now: nowMs,
        });
        if (result.claimed) {
          const ref = { keyId, keyHash, claim };
          return { kind: 'claimed', claim: claimOf(ref, nowMs, result.inherited) };
        }
        const { record } = result;
        if (record) return decided(record, keyId, keyHash, fingerprint);
      }
      return { kind: 'in_flight' };
    },
    async earlier(keyId, idempotencyKey, request, nowMs) {
      const { keyHash, fingerprint } = hashes(keyId, idempotencyKey, request);
      const record = await repository.find({ keyId, keyHash });
      if (record === undefined || record.expiresAt <= nowMs) return undefined;
      return decided(record, keyId, keyHash, fingerprint);
    },
    sweep: (nowMs) => repository.sweep(nowMs, refundUnit),
  };
}

/**
 * True when `cause` is the failure of a write that went with `Claim.keep` because another
 * request had taken the claim over (its lease had run out): nothing of it was stored.
 */
export function claimTakenOver(cause: unknown): boolean {
  return cause instanceof GuardFailed;
}

function isKeptOutcome(value: unknown): value is KeptOutcome {
  if (typeof value !== 'object' || value === null) return false;
  const outcome = value as Record<string, unknown>;
  const common =
    (outcome.language === 'de' || outcome.language === 'en') &&
    typeof outcome.turnId === 'string' &&
    typeof outcome.createdAt === 'number';
  if (outcome.kind === 'reply')
    return common && typeof outcome.reply === 'string' && isOptionalUsage(outcome.usage);
  if (outcome.kind === 'soft_error')
    return common && typeof outcome.code === 'string' && isOptionalDetail(outcome.detail);
  return false;
}

function isOptionalUsage(value: unknown): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'object' || value === null) return false;
  const usage = value as Record<string, unknown>;
  return typeof usage.promptTokens === 'number' && typeof usage.completionTokens === 'number';
}

function isOptionalDetail(value: unknown): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'object' || value === null) return false;
  const detail = value as Record<string, unknown>;
  return (
    (detail.param === null || typeof detail.param === 'string') &&
    typeof detail.message === 'string' &&
    (detail.code === undefined || typeof detail.code === 'string')
  );
}
