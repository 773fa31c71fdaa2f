/**
 * @module chat/take-turn
 * A turn, end to end (contract §8): authenticate (done by the front door) → idempotency →
 * plan → limits → the request → reserve → session → core → record → answer. Every front
 * door calls `takeTurn` and renders the decision it returns; none of them decides
 * anything itself.
 *
 * The rules that live here:
 * - the decision order of the contract's table (rows 1a-10);
 * - a reply is counted once: reserved before the core, refunded when no reply is
 *   delivered (the core failed, the client left, the turn could not be stored);
 * - a turn's core sees the session as it was when the turn began, and the turn is stored
 *   after whatever the session holds when its reply is ready (never refused for that);
 * - an idempotent outcome is kept together with the turn it answers, or not at all;
 * - a streamed turn starts its stream only once every decision before the core has passed,
 *   and ends with the same decision as an unstreamed one (counted once, when it is `reply`).
 */
import { randomUUID } from 'node:crypto';
import type {
  CoreAdapter,
  CoreNotice,
  Language,
  Sampling,
  TokenUsage,
  Turn,
} from '../core/core-adapter.js';
import type { SoftErrorCode } from '../errors/error-codes.js';
import type { ProblemDetail } from '../errors/problem-detail.js';
import { parseIdempotencyKey } from '../idempotency/idempotency-key.js';
import type { Claim, KeptOutcome, RequestFingerprint } from '../idempotency/idempotency-service.js';
import type { QuotaKey, QuotaState, Reservation } from '../quota/quota-service.js';
import type { Services } from '../services.js';
import type { OpenSession, SessionPlan } from '../sessions/session-service.js';
import type { CancelSignal } from '../util/cancellation.js';
import { type CoreFailureCode, createStopping, runCore, type Stopping } from './run-core.js';
import { estimateUsage } from './token-estimate.js';
import { TurnsPerKey } from './turns-per-key.js';

/** The authenticated key, as the turn needs it (its plan's limits: see QuotaKey). */
export interface TurnKey extends QuotaKey {
  readonly active: boolean;
}

/** The request as the front door read it: a message, or the soft error it amounts to. */
export type TurnRequest =
  | {
      readonly ok: true;
      readonly message: string;
      readonly sessionId: string | undefined;
      /**
       * History the client sent (OpenAI-style clients keep their own), oldest first; used,
       * within the session window, when there is no `sessionId`. Absent: none.
       */
      readonly history?: readonly Turn[];
      /** The client's system/developer messages, for an LLM core (see CoreRequest). */
      readonly instructions?: readonly string[];
      readonly sampling?: Sampling;
    }
  | { readonly ok: false; readonly code: SoftErrorCode; readonly detail?: ProblemDetail };

/**
 * What exactly was wrong, for front doors that name it (`/v1` names the parameter). Opaque
 * to the use case: kept with the outcome so that a replay says the same.
 */
export type { ProblemDetail };

/**
 * Where a streamed turn's pieces go. `start` is called once, when every decision before
 * the core has passed (the quota is reserved), just after the core was asked and before
 * any piece of its reply: the front door writes its 200 and headers then. `delta` follows
 * for each piece of the reply. The turn's decision comes at the end as for any turn.
 */
export interface TurnStream {
  start(quota: QuotaState, stamp: TurnStamp): void;
  /**
   * A promise when the client has not read what it was sent: the core's next piece is taken
   * only once it settles (README, "Streamed replies").
   */
  delta(text: string): void | Promise<void>;
}

export interface TurnInput {
  readonly key: TurnKey;
  /** The endpoint's language: the reply's language. */
  readonly language: Language;
  readonly request: TurnRequest;
  /** The `Idempotency-Key` header as received (absent: undefined). */
  readonly idempotencyKey: string | string[] | undefined;
  /** The endpoint and raw body, to recognise a repeat of this request. */
  readonly fingerprint: RequestFingerprint;
  /** Aborts when the client has gone away. */
  readonly signal: CancelSignal;
  /** Where the core's notices go (the front door's request log). */
  readonly onNotice?: (notice: CoreNotice) => void;
  /** Given when the client asked for a streamed reply. */
  readonly stream?: TurnStream;
}

/** Identifies an answered turn (front doors that show an id or a time use these). */
export interface TurnStamp {
  readonly turnId: string;
  readonly createdAt: number;
}

export type TurnDecision =
  | ({
      readonly kind: 'reply';
      readonly reply: string;
      readonly quota: QuotaState;
      /** The core's token counts, or an estimate (src/chat/token-estimate.ts). */
      readonly usage: TokenUsage;
    } & TurnStamp &
      Replayed)
  | ({
      readonly kind: 'soft_error';
      readonly code: SoftErrorCode;
      readonly detail?: ProblemDetail;
      readonly quota: QuotaState;
    } & TurnStamp &
      Replayed)
  | { readonly kind: 'quota_exceeded'; readonly quota: QuotaState }
  | { readonly kind: 'rate_limited'; readonly quota: QuotaState }
  /** The key already runs its maximum of turns at once on this instance. */
  | { readonly kind: 'too_many_concurrent' }
  | { readonly kind: 'idempotency_key_invalid' }
  | { readonly kind: 'idempotency_key_in_flight' }
  | { readonly kind: 'idempotency_key_reused' }
  | { readonly kind: 'failed'; readonly code: CoreFailureCode; readonly cause: unknown }
  | { readonly kind: 'client_closed' };

interface Replayed {
  /** True when this is the kept outcome of an earlier request with the same Idempotency-Key. */
  readonly replayed: boolean;
}

export type TakeTurn = (input: TurnInput) => Promise<TurnDecision>;

/** A request that carries a message (rows 4-8 passed). */
type MessageRequest = Extract<TurnRequest, { ok: true }>;

/** A unit of the quota reserved for this turn. */
type Reserved = Extract<Reservation, { ok: true }>;

export interface TakeTurnOptions {
  /**
   * Aborts when the service is stopping and turns still waiting for the core must end:
   * they are refunded and answered as failed, so nothing is counted that was not delivered.
   */
  readonly stopping?: Stopping;
}

export function createTakeTurn(
  services: Services,
  core: CoreAdapter,
  options: TakeTurnOptions = {},
): TakeTurn {
  const stopping = options.stopping ?? createStopping();
  const { quota, sessions, idempotency, clock, config } = services;
  const turnsPerKey = new TurnsPerKey();
  const maxTurns = (key: TurnKey) =>
    config.plans.get(key.plan)?.concurrent ?? config.limits.keyConcurrency;

  /** Rows 2-10, once the idempotency key (if any) is claimed. */
  async function decide(input: TurnInput, claim: Claim | undefined): Promise<TurnDecision> {
    const now = clock();
    const stamp = newStamp(now);
    const admitted = await admit(input, claim, now, stamp);
    if (!admitted.ok) return admitted.decision;
    const { request, reservation, session } = admitted;
    try {
      return await converse(input, request, session, claim, reservation, now, stamp);
    } finally {
      turnsPerKey.release(input.key.id);
    }
  }

  /** Rows 2-8 and the reservation: a decision made before the core, or the reserved unit. */
  async function admit(
    input: TurnInput,
    claim: Claim | undefined,
    now: number,
    stamp: TurnStamp,
  ): Promise<
    | { ok: true; request: MessageRequest; reservation: Reserved; session: SessionPlan | undefined }
    | { ok: false; decision: TurnDecision }
  > {
    const { key, request, signal } = input;
    if (!key.active) {
      const state = await quota.current(key, now);
      return softError(input, claim, stamp, 'plan_inactive', state);
    }
    if (!request.ok) {
      const state = await quota.current(key, now);
      if (state.used >= state.limit) return decided({ kind: 'quota_exceeded', quota: state });
      if (state.minute && state.minute.used >= state.minute.limit)
        return decided({ kind: 'rate_limited', quota: state });
      return softError(input, claim, stamp, request.code, state, request.detail);
    }
    if (signal.aborted) return decided({ kind: 'client_closed' });

    // The session's row is read with the reservation where the database can (one round
    // trip on PostgreSQL), else on its own when the session is opened.
    const session =
      request.sessionId === undefined ? undefined : sessions.plan(key.id, request.sessionId);
    // The key's place is taken before its unit, and held until the turn's decision is final.
    if (!turnsPerKey.take(key.id, maxTurns(key))) return decided({ kind: 'too_many_concurrent' });
    let reservation: Reservation;
    try {
      reservation = await quota.reserve(key, now, session?.read);
    } catch (cause) {
      turnsPerKey.release(key.id);
      throw cause;
    }
    if (reservation.ok) return { ok: true, request, reservation, session };
    turnsPerKey.release(key.id);
    const kind = reservation.refusedBy === 'minute' ? 'rate_limited' : 'quota_exceeded';
    return decided({ kind, quota: reservation.state });
  }

  /** A soft error: kept for the idempotency key (if any), answered with the quota as it is. */
  async function softError(
    input: TurnInput,
    claim: Claim | undefined,
    stamp: TurnStamp,
    code: SoftErrorCode,
    state: QuotaState,
    detail?: ProblemDetail,
  ): Promise<{ ok: false; decision: TurnDecision }> {
    const { turnId, createdAt } = stamp;
    const details = detail === undefined ? {} : { detail };
    await claim?.keepNow({
      kind: 'soft_error',
      code,
      language: input.language,
      turnId,
      createdAt,
      ...details,
    });
    return decided({
      kind: 'soft_error',
      code,
      quota: state,
      replayed: false,
      turnId,
      createdAt,
      ...details,
    });
  }

  /**
   * Session → core → record, with a unit reserved: a reply, or a decision after which the
   * unit has been refunded (nothing was delivered, so nothing counts).
   */
  async function converse(
    input: TurnInput,
    request: MessageRequest,
    plan: SessionPlan | undefined,
    claim: Claim | undefined,
    reservation: Reserved,
    now: number,
    stamp: TurnStamp,
  ): Promise<TurnDecision> {
    const { language, signal } = input;
    const failed = (decision: TurnDecision) => refunded(reservation, decision);
    let session: OpenSession | undefined;
    try {
      session = await plan?.open(now, reservation.alongside);
    } catch (cause) {
      return failed({ kind: 'failed', code: 'internal_error', cause });
    }
    const history = session?.history ?? lastTurns(request.history, config.sessionWindow);
    const coreRequest = {
      language,
      message: request.message,
      history,
      conversationId: session?.conversationId,
      onNotice: input.onNotice,
      instructions: request.instructions,
      sampling: request.sampling,
    };
    const running = runCore(
      core,
      coreRequest,
      { client: signal, stopping, timeoutMs: config.coreTimeoutMs },
      input.stream?.delta,
    );
    // The stream starts once the core has been asked (an upstream's request is on its way
    // while the front door builds its head): runCore passes deltas on only after an await,
    // so none comes before this.
    input.stream?.start(reservation.state, stamp);
    const result = await running;
    if (!result.ok) {
      if (result.code === 'client_closed') return failed({ kind: 'client_closed' });
      return failed({ kind: 'failed', code: result.code, cause: result.cause });
    }
    // The client left while the core finished: nothing is delivered, so nothing counts.
    if (signal.aborted) return failed({ kind: 'client_closed' });

    const reply = result.reply;
    // Estimated only when someone asks (/v1, MCP, a kept outcome): counting the characters
    // of a 20-turn history costs more than the rest of the turn's bookkeeping.
    let estimated: TokenUsage | undefined;
    const usage = () => {
      if (result.usage !== undefined) return result.usage;
      if (estimated === undefined) estimated = estimateUsage(coreRequest, reply);
      return estimated;
    };
    try {
      const outcome = (): KeptOutcome => ({
        kind: 'reply',
        reply,
        language,
        usage: usage(),
        ...stamp,
      });
      const kept = claim?.keep(outcome());
      const turn = { message: request.message, reply, language };
      const stored = session ? await session.record(turn, clock(), kept ? [kept] : []) : false;
      if (!stored) await claim?.keepNow(outcome());
    } catch (cause) {
      return failed({ kind: 'failed', code: 'internal_error', cause });
    }
    return new ReplyDecision(reply, reservation.state, stamp, usage);
  }

  async function replay(key: TurnKey, outcome: KeptOutcome): Promise<TurnDecision> {
    const state = await quota.current(key, clock());
    const stamp = { turnId: outcome.turnId, createdAt: outcome.createdAt };
    if (outcome.kind === 'reply') {
      // Outcomes kept before usage was kept count the reply alone.
      const usage = outcome.usage ?? estimateUsage(undefined, outcome.reply);
      const { reply } = outcome;
      return { kind: 'reply', reply, quota: state, usage, replayed: true, ...stamp };
    }
    const detail = outcome.detail === undefined ? {} : { detail: outcome.detail };
    const { turnId, createdAt } = stamp;
    return {
      kind: 'soft_error',
      code: outcome.code,
      quota: state,
      replayed: true,
      turnId,
      createdAt,
      ...detail,
    };
  }

  return async function takeTurn(input) {
    const header = parseIdempotencyKey(input.idempotencyKey);
    if (!header.ok) return { kind: 'idempotency_key_invalid' };
    if (header.key === undefined) return guarded(() => decide(input, undefined));

    let claimed: Awaited<ReturnType<typeof idempotency.claim>>;
    try {
      claimed = await idempotency.claim(input.key.id, header.key, input.fingerprint, clock());
    } catch (cause) {
      return { kind: 'failed', code: 'internal_error', cause };
    }
    switch (claimed.kind) {
      case 'replay':
        return guarded(() => replay(input.key, claimed.outcome));
      case 'in_flight':
        return { kind: 'idempotency_key_in_flight' };
      case 'reused':
        return { kind: 'idempotency_key_reused' };
      case 'claimed': {
        const decision = await guarded(() => decide(input, claimed.claim));
        // Only replies and soft errors are kept (with the turn); anything else runs afresh.
        if (decision.kind !== 'reply' && decision.kind !== 'soft_error') {
          await claimed.claim.release();
        }
        return decision;
      }
    }
  };
}

/**
 * A delivered reply whose token counts are estimated only when a front door reads them.
 * A class, not an object literal with a getter: see test/house/object-literals.test.ts.
 */
class ReplyDecision {
  readonly kind = 'reply';
  readonly replayed = false;
  readonly turnId: string;
  readonly createdAt: number;

  constructor(
    readonly reply: string,
    readonly quota: QuotaState,
    stamp: TurnStamp,
    private readonly countUsage: () => TokenUsage,
  ) {
    this.turnId = stamp.turnId;
    this.createdAt = stamp.createdAt;
  }

  get usage(): TokenUsage {
    return this.countUsage();
  }
}

function decided(decision: TurnDecision): { ok: false; decision: TurnDecision } {
  return { ok: false, decision };
}

/** Nothing was delivered: the reserved unit goes back, then the decision stands. */
async function refunded(reservation: Reserved, decision: TurnDecision): Promise<TurnDecision> {
  await reservation.refund();
  return decision;
}

/** A database failure anywhere in the turn is a technical error, decided like the others. */
async function guarded(decide: () => Promise<TurnDecision>): Promise<TurnDecision> {
  try {
    return await decide();
  } catch (cause) {
    return { kind: 'failed', code: 'internal_error', cause };
  }
}

/** The last `window` turns of a client-sent history (the same bound as a session's). */
function lastTurns(history: readonly Turn[] | undefined, window: number): readonly Turn[] {
  if (history === undefined || window <= 0) return [];
  return history.length > window ? history.slice(-window) : history;
}

/** A turn id: a random UUID (front doors build `chatcmpl-…` ids from it). */
function newStamp(now: number): TurnStamp {
  return { turnId: randomUUID(), createdAt: now };
}
