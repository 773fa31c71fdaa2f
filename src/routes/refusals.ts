/**
 * @module routes/refusals
 * The turn decisions that are neither a reply nor a soft error, answered alike by every JSON
 * front door (`/api/chat`, `/v1`): thrown as `ApiError` for the route's error handler, which
 * writes its own envelope (plauder's, or OpenAI's on /v1).
 */
import type { FastifyReply } from 'fastify';
import type { TurnDecision } from '../chat/take-turn.js';
import { CoreError } from '../core/core-adapter.js';
import { ApiError } from '../errors/api-error.js';
import { type QuotaState, rateLimitHeaders, retryAfterSeconds } from '../quota/quota-service.js';

/** The decisions that are neither a reply nor a soft error. */
export type Refusal = Exclude<TurnDecision, { kind: 'reply' | 'soft_error' }>;

type RefusalCode =
  | Exclude<Refusal, { kind: 'failed' | 'client_closed' | 'client_closed_after_delivery' }>['kind']
  | Extract<Refusal, { kind: 'failed' }>['code'];

/** The codes `refuse` answers with, declared by every door that takes a turn. */
export const REFUSAL_CODES: readonly RefusalCode[] = [
  'idempotency_key_invalid',
  'idempotency_key_in_flight',
  'idempotency_key_reused',
  'quota_exceeded',
  'rate_limited',
  'token_budget_exceeded',
  'too_many_concurrent',
  'internal_error',
  'core_unavailable',
  'core_timeout',
];

export function refuse(decision: Refusal, reply: FastifyReply): FastifyReply {
  switch (decision.kind) {
    case 'quota_exceeded':
      throw quotaExceeded(decision.quota);
    case 'rate_limited':
      throw rateLimited(decision.quota);
    case 'token_budget_exceeded':
      throw tokenBudgetExceeded(decision.quota, decision.refusedBy);
    case 'idempotency_key_invalid':
    case 'idempotency_key_reused':
      throw new ApiError(decision.kind);
    case 'idempotency_key_in_flight':
    case 'too_many_concurrent':
      throw new ApiError(decision.kind, { 'retry-after': '1' });
    case 'failed':
      throw Object.assign(failedError(decision), { cause: decision.cause });
    case 'client_closed':
    case 'client_closed_after_delivery':
      // Nobody is there to answer; the request is logged when its connection closed.
      return reply.hijack();
    default:
      return decision satisfies never;
  }
}

/**
 * A failed core is 500, except a core that refused at once because every upstream rests
 * (their circuit breakers are open): 503 with `Retry-After` until the first probe, which
 * OpenAI's clients may retry (docs/core.md, "Several upstreams").
 */
function failedError({ code, cause }: Extract<Refusal, { kind: 'failed' }>): ApiError {
  const retryAfterMs = cause instanceof CoreError ? cause.retryAfterMs : undefined;
  if (code !== 'core_unavailable' || retryAfterMs === undefined) return new ApiError(code);
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiError(code, { 'retry-after': String(seconds) }, 503);
}

function quotaExceeded(state: QuotaState): ApiError {
  const retryAfter = String(retryAfterSeconds(state, 'month'));
  const headers = rateLimitHeaders(state);
  headers['retry-after'] = retryAfter;
  return new ApiError('quota_exceeded', headers);
}

/**
 * 429 for a token budget (docs/quota-and-limits.md, "Token budgets"): `Retry-After` is the
 * time until the refusing window (the month's or the minute's) starts again.
 */
function tokenBudgetExceeded(state: QuotaState, refusedBy: 'month' | 'minute'): ApiError {
  const headers = rateLimitHeaders(state);
  headers['retry-after'] = String(
    retryAfterSeconds(state, refusedBy === 'minute' ? 'tokens-minute' : 'tokens-month'),
  );
  return new ApiError('token_budget_exceeded', headers);
}

/** 429 for the per-minute limit: `Retry-After` is the time until the minute frees up. */
function rateLimited(state: QuotaState): ApiError {
  const retryAfter = String(retryAfterSeconds(state, 'minute'));
  const headers = rateLimitHeaders(state);
  headers['retry-after'] = retryAfter;
  return new ApiError('rate_limited', headers);
}
