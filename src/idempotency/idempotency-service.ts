/**
 * @module idempotency/idempotency-service
 * Idempotent retries (docs/contract.md, "Idempotent retries"). The first request with an `Idempotency-Key` claims it;
 * its outcome, when it is one to keep, is sealed and kept for the TTL, scoped to the API
 * key's id; a repeat with the same endpoint and body gets that outcome again, another
 * body or endpoint is refused, and a repeat while the first still runs (on any instance)
 * is told to come back. Outcomes that are not kept (failures, refusals) release the claim.
 *
 * A claim that its request never completes (the process died) holds a lease: once it has
 * passed, the key can be claimed anew. The lease is longer than any turn may take.
 */
import { randomUUID } from 'node:crypto';
import type { CoreFinish, Language, TokenUsage } from '../core/core-adapter.js';
import type { SoftErrorCode } from '../errors/error-codes.js';
import type { ProblemDetail } from '../errors/problem-detail.js';
import type { TurnSealer } from '../sessions/turn-sealer.js';
import type { WriteStep } from '../storage/prepared-query.js';
import type {
  ClaimRef,
  IdempotencyRepository,
} from '../storage/repositories/idempotency-repository.js';

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

export type ClaimResult =
  | { readonly kind: 'claimed'; readonly claim: Claim }
  | { readonly kind: 'replay'; readonly outcome: KeptOutcome }
  | { readonly kind: 'in_flight' }
  | { readonly kind: 'reused' };

export interface Claim {
  /** The write that keeps `outcome`, to commit together with the turn it answers. */
  keep(outcome: KeptOutcome): WriteStep;
  /** Keeps `outcome` on its own. */
  keepNow(outcome: KeptOutcome): Promise<void>;
  /** The outcome is not kept: the next request with this key runs afresh. Never throws. */
  release(): Promise<void>;
}

export interface IdempotencyService {
  claim(
    keyId: string,
    idempotencyKey: string,
    request: RequestFingerprint,
    nowMs: number,
  ): Promise<ClaimResult>;
  sweep(nowMs: number): Promise<number>;
}

export interface IdempotencyOptions {
  /** How long a kept outcome is replayed. */
  readonly ttlMs: number;
  /** How long a claim holds without its request finishing. */
  readonly leaseMs: number;
}

/** A key claimed, released and claimed again meanwhile is asked about a few times at most. */
const CLAIM_ATTEMPTS = 3;

export function createIdempotencyService(
  repository: IdempotencyRepository,
  sealer: TurnSealer,
  options: IdempotencyOptions,
): IdempotencyService {
  const binding = (keyId: string, keyHash: string) => `${keyId}\0${keyHash}\0idempotency`;

  function claimOf(ref: ClaimRef, nowMs: number): Claim {
    const keepUntil = nowMs + options.ttlMs;
    const seal = (outcome: KeptOutcome) =>
      sealer.sealJson(outcome, binding(ref.keyId, ref.keyHash));
    return {
      keep: (outcome) => repository.completion(ref, seal(outcome), keepUntil),
      keepNow: (outcome) => repository.complete(ref, seal(outcome), keepUntil),
      // A claim that cannot be released runs out with its lease.
      release: () => repository.release(ref).catch(() => {}),
    };
  }

  return {
    async claim(keyId, idempotencyKey, request, nowMs) {
      const keyHash = sealer.digest('idempotency key', keyId, idempotencyKey);
      const fingerprint = sealer.digest('request', keyId, request.endpoint, request.body);
      const claim = randomUUID();
      for (let attempt = 1; attempt <= CLAIM_ATTEMPTS; attempt++) {
        const result = await repository.claim({
          keyId,
          keyHash,
          fingerprint,
          claim,
          leaseUntil: nowMs + options.leaseMs,
          now: nowMs,
        });
        if (result.claimed)
          return { kind: 'claimed', claim: claimOf({ keyId, keyHash, claim }, nowMs) };
        const { record } = result;
        if (!record) continue;
        if (record.fingerprint !== fingerprint) return { kind: 'reused' };
        if (record.outcome === null) return { kind: 'in_flight' };
        const outcome = sealer.openJson(record.outcome, binding(keyId, keyHash));
        // An outcome that does not open (another secret) is treated as never kept.
        if (isKeptOutcome(outcome)) return { kind: 'replay', outcome };
        return { kind: 'in_flight' };
      }
      return { kind: 'in_flight' };
    },
    sweep: (nowMs) => repository.sweep(nowMs),
  };
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
