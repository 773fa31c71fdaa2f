/**
 * @module chat/take-turn
 * A turn, end to end (docs/contract.md, "A turn"): authenticate (done by the front door) → idempotency →
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
 * - an idempotent outcome is kept together with the turn it answers, or not at all; only
 *   a request that will reach the core claims its key, so soft errors leave nothing behind;
 * - a streamed turn starts its stream only once every decision before the core has passed,
 *   and ends with the same decision as an unstreamed one (counted once, when it is `reply`).
 */
import { randomUUID } from 'node:crypto';
import type {
  CoreAdapter,
  CoreFinish,
  CoreNotice,
  GatewayParameters,
  JsonObject,
  Language,
  Sampling,
  TokenUsage,
  Turn,
  WireMessage,
} from '../core/core-adapter.js';
import type { SoftErrorCode } from '../errors/error-codes.js';
import type { ProblemDetail } from '../errors/problem-detail.js';
import { parseIdempotencyKey } from '../idempotency/idempotency-key.js';
import {
  type Claim,
  claimTakenOver,
  type EarlierRequest,
  type KeptOutcome,
  type RequestFingerprint,
} from '../idempotency/idempotency-service.js';
import type { QuotaKey, QuotaState, Reservation } from '../quota/quota-service.js';
import type { OpenTokens } from '../quota/token-budgets.js';
import type { Services } from '../services.js';
import type { OpenSession, Recorded } from '../sessions/session-service.js';
import type { Writes } from '../storage/unit-of-work.js';
import type { CancelSignal } from '../util/cancellation.js';
import { CoreSlots, KeyPlaces, type Place, type Waited } from './fair-share.js';
import { type HeldReply, type ReplyText, replyString } from './reply-text.js';
import { type CoreFailureCode, createStopping, runCore, type Stopping } from './run-core.js';
import { estimateUsage } from './token-estimate.js';
import { partialTokens, tokensOf, turnTokens } from './turn-tokens.js';

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
      /**
       * The turn's input as Chat Completions messages when it is more than one user text
       * (tool results, image parts); only a gateway core can take it.
       */
      readonly input?: readonly WireMessage[];
      /** Parameters for a gateway core's upstream (tools, response_format, ...). */
      readonly gateway?: GatewayParameters;
      /**
       * The first part of the request that only a gateway core can honour (a parameter, a
       * tool message, an image part), named as a refusal would name it. Absent: plain text.
       */
      readonly gatewayOnly?: ProblemDetail;
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
   * only once it settles (docs/contract.md, "Streamed replies").
   */
  delta(text: string): void | Promise<void>;
  /** Tool-call deltas as the upstream streamed them (a gateway core's answer). */
  toolCalls?(deltas: readonly JsonObject[]): void | Promise<void>;
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
  readonly onNotice?: (notice: TurnNotice) => void;
  /** Given when the client asked for a streamed reply. */
  readonly stream?: TurnStream;
  /** Given by a door whose answer leaves later, with others (an MCP batch). */
  readonly handover?: Handover;
  /**
   * Settles when the answer has been handed over: true when its last byte was written to the
   * socket, false when the client went first. The key's place is held until then
   * (docs/contract.md, "Burst limits"), so a key cannot hold more answers in the making than
   * its places; a reply answered as one JSON body counts only if it was written whole ("The
   * client goes away"). Absent: the place is freed with the decision, the reply counts.
   */
  readonly handedOver?: Promise<boolean>;
  /** Told how long the turn waited for its key's place and a core slot, when it waited. */
  readonly onWait?: (waitedMs: number) => void;
  /**
   * Writes a door commits with the turn when its session stores it (the Responses door
   * keeps its response object): asked once, for a reply that is being stored.
   */
  readonly keepWith?: (reply: ReplyOf) => Writes | undefined;
}

/**
 * What a turn reports for the logs besides its decision: the core's notices, and an upstream
 * that returned more tokens than the turn allowed (charged what it returned).
 */
export type TurnNotice =
  | CoreNotice
  | {
      readonly kind: 'tokens_over_reservation';
      readonly reserved: number;
      readonly charged: number;
    };

/** A turn's reply as its decision gives it. */
export type ReplyOf = Extract<TurnDecision, { kind: 'reply' }>;

/**
 * An answer that leaves after the turn's decision, together with others (the members of an
 * MCP batch are answered in one response). A reply is counted, stored and kept only once
 * `ready` says the answer is leaving with the client still there; the door awaits the work
 * given to `pending` before it writes, so a stored turn is there when its client reads it.
 */
export interface Handover {
  /** True when the answer is about to be written to a client that is still there. */
  readonly ready: Promise<boolean>;
  pending(work: Promise<unknown>): void;
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
      /**
       * A streamed reply's UTF-8 bytes, which `reply` decodes afresh at each reading: a door
       * that repeats the reply in its stream writes it from these (src/chat/reply-text.ts).
       */
      readonly replyText?: ReplyText;
      readonly quota: QuotaState;
      /** The core's token counts, or an estimate (src/chat/token-estimate.ts). */
      readonly usage: TokenUsage;
      /** How the answer ended when it was more than text (tool calls, a length stop). */
      readonly finish: CoreFinish | undefined;
      /** True when the turn was too large for its session's byte bound: not stored. */
      readonly sessionTruncated?: boolean;
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
  /** The turn's worst case does not fit the plan's token budget (docs/quota-and-limits.md). */
  | {
      readonly kind: 'token_budget_exceeded';
      readonly refusedBy: 'month' | 'minute';
      readonly quota: QuotaState;
    }
  /** The key already runs its maximum of turns at once on this instance. */
  | { readonly kind: 'too_many_concurrent' }
  | { readonly kind: 'idempotency_key_invalid' }
  | { readonly kind: 'idempotency_key_in_flight' }
  | { readonly kind: 'idempotency_key_reused' }
  | { readonly kind: 'failed'; readonly code: CoreFailureCode; readonly cause: unknown }
  | { readonly kind: 'client_closed' }
  /** The client left after a part of the reply reached it: counted, not stored, not kept. */
  | { readonly kind: 'client_closed_after_delivery' };

interface Replayed {
  /** True when this is the kept outcome of an earlier request with the same Idempotency-Key. */
  readonly replayed: boolean;
}

export type TakeTurn = (input: TurnInput) => Promise<TurnDecision>;

/** A request that carries a message (rows 4-8 passed). */
type MessageRequest = Extract<TurnRequest, { ok: true }>;

/** A turn's places (src/chat/fair-share.ts): its key's, and a core slot where there are any. */
interface Held {
  readonly place: Place;
  readonly slot: Place | undefined;
}

/** A unit of the quota reserved for this turn. */
type Reserved = Extract<Reservation, { ok: true }>;

/** The turn's session being opened (undefined: the turn has none), or why it could not be. */
type Opening =
  | Promise<{ ok: true; session: OpenSession } | { ok: false; cause: unknown }>
  | undefined;

export interface TakeTurnOptions {
  /**
   * Aborts when the service is stopping and turns still waiting for the core must end:
   * they are refunded and answered as failed, so nothing is counted that was not delivered.
   */
  readonly stopping?: Stopping;
  /** Told how long each turn that waited for a place waited (the metrics' histogram). */
  readonly observeWait?: (waitedMs: number) => void;
  /** Told when a turn starts (+1) and stops (-1) waiting for a place (the metrics' gauge). */
  readonly countWaiting?: (change: 1 | -1) => void;
  /** Told the tokens a turn of a plan with token budgets was charged (the metrics' counter). */
  readonly countTokens?: (plan: string, tokens: number) => void;
}

export function createTakeTurn(
  services: Services,
  core: CoreAdapter,
  options: TakeTurnOptions = {},
): TakeTurn {
  const stopping = options.stopping ?? createStopping();
  const { quota, sessions, idempotency, clock, config } = services;
  const places = new KeyPlaces();
  // Only a core with a bounded pool of upstream connections has slots to share.
  const slots = core.capacity === undefined ? undefined : new CoreSlots(core.capacity);
  const keyLimits = (key: TurnKey) => {
    const plan = config.plans.get(key.plan);
    const { keyConcurrency, keyQueue, keyQueueTimeoutMs } = config.limits;
    return {
      max: plan?.concurrent ?? keyConcurrency,
      queue: plan?.queue ?? keyQueue,
      timeoutMs: keyQueueTimeoutMs,
    };
  };

  /** Rows 2-10, once the idempotency key (if any) is claimed. */
  async function decide(input: TurnInput, claim: Claim | undefined): Promise<TurnDecision> {
    const now = clock();
    const stamp = newStamp(now);
    const admitted = await admit(input, claim, now, stamp);
    if (!admitted.ok) return admitted.decision;
    const { request, reservation, session, held } = admitted;
    try {
      return await converse(input, request, session, claim, reservation, stamp, held.slot);
    } finally {
      held.slot?.release();
      if (input.handedOver === undefined) held.place.release();
      else input.handedOver.then(held.place.release, held.place.release);
    }
  }

  /**
   * The key's place, then a core slot where the core has a pool to share (docs/contract.md,
   * "Burst limits"): at once when free, else after waiting in line. A turn that would wait
   * is first told a refusal that needs no place (the month or minute used up), at once.
   */
  async function takePlaces(
    input: TurnInput,
    now: number,
  ): Promise<{ ok: true; held: Held; waitedMs: number } | { ok: false; decision: TurnDecision }> {
    const { key, signal } = input;
    const limits = keyLimits(key);
    let place = places.tryTake(key.id, limits.max);
    let waitedMs = 0;
    if (place === undefined) {
      const { state, refusedBy } = await quota.check(key, now);
      if (refusedBy === 'month') return decided({ kind: 'quota_exceeded', quota: state });
      if (refusedBy === 'minute') return decided({ kind: 'rate_limited', quota: state });
      const waited = await waitFor(places.wait(key.id, limits, signal));
      waitedMs = waited.waitedMs;
      if (!waited.ok) return refusedWait(input, waited.why, waitedMs);
      place = waited.place;
    }
    if (slots === undefined) return placed(input, { place, slot: undefined }, waitedMs);
    const slot = await waitFor(
      slots.wait(key.id, Math.max(1, limits.timeoutMs - waitedMs), signal),
    );
    waitedMs += slot.waitedMs;
    if (!slot.ok) {
      place.release();
      return refusedWait(input, slot.why, waitedMs);
    }
    return placed(input, { place, slot: slot.place }, waitedMs);
  }

  /** A wait, counted in the gauge of waiting turns while it lasts (when it does). */
  async function waitFor(waiting: Promise<Waited>): Promise<Waited> {
    const count = options.countWaiting;
    if (count === undefined) return waiting;
    count(1);
    try {
      return await waiting;
    } finally {
      count(-1);
    }
  }

  function placed(input: TurnInput, held: Held, waitedMs: number) {
    if (waitedMs > 0) observeWait(input, waitedMs);
    return { ok: true as const, held, waitedMs };
  }

  /** A turn that waited in vain: its client left, or its line was full or too slow. */
  function refusedWait(input: TurnInput, why: 'queue_full' | 'timeout' | 'gone', waitedMs: number) {
    if (waitedMs > 0) observeWait(input, waitedMs);
    return decided({ kind: why === 'gone' ? 'client_closed' : 'too_many_concurrent' });
  }

  function observeWait(input: TurnInput, waitedMs: number) {
    input.onWait?.(waitedMs);
    options.observeWait?.(waitedMs);
  }

  /** Rows 2-8 and the reservation: a decision made before the core, or the reserved unit. */
  async function admit(
    input: TurnInput,
    claim: Claim | undefined,
    now: number,
    stamp: TurnStamp,
  ): Promise<
    | { ok: true; request: MessageRequest; reservation: Reserved; session: Opening; held: Held }
    | { ok: false; decision: TurnDecision }
  > {
    const { key, request, signal } = input;
    if (!key.active) {
      const state = await quota.current(key, now);
      return softError(stamp, 'plan_inactive', state);
    }
    if (!request.ok) {
      const { state, refusedBy } = await quota.check(key, now);
      if (refusedBy === 'month') return decided({ kind: 'quota_exceeded', quota: state });
      if (refusedBy === 'minute') return decided({ kind: 'rate_limited', quota: state });
      return softError(stamp, request.code, state, request.detail);
    }
    if (signal.aborted) return decided({ kind: 'client_closed' });

    // The key's place is taken before its unit, and held until the answer is handed over.
    const taken = await takePlaces(input, now);
    if (!taken.ok) return taken;
    const { held } = taken;
    // A turn that waited is judged at the time it runs (its month or minute may have ended).
    const at = taken.waitedMs > 0 ? clock() : now;
    const release = () => {
      held.slot?.release();
      held.place.release();
    };
    // The session is read while the unit is reserved (on PostgreSQL both statements go in
    // one round trip); a refused turn only drops what was read.
    const session: Opening =
      request.sessionId === undefined
        ? undefined
        : sessions.open(key.id, request.sessionId, at).then(
            (opened) => ({ ok: true, session: opened }),
            (cause: unknown) => ({ ok: false, cause }),
          );
    let reservation: Reservation;
    try {
      reservation = await quota.reserve(key, at, claim?.unit);
    } catch (cause) {
      release();
      throw cause;
    }
    if (reservation.ok) return { ok: true, request, reservation, session, held };
    release();
    const kind = reservation.refusedBy === 'minute' ? 'rate_limited' : 'quota_exceeded';
    return decided({ kind, quota: reservation.state });
  }

  /**
   * A request that only a gateway core can honour, asked of another core: refused by name
   * like any bad body, before anything is counted (docs/contract.md, "OpenAI-compatible
   * door").
   */
  function refusedByCore(request: TurnRequest): TurnRequest {
    if (!request.ok || request.gatewayOnly === undefined || core.gateway) return request;
    const { param, message } = request.gatewayOnly;
    const detail = {
      param,
      message: `${message} by the ${core.name} core: it needs an LLM core (PLAUDER_CORE=openai).`,
    };
    return { ok: false, code: 'body_invalid', detail };
  }

  /** A soft error (never kept: a retry gets it afresh), answered with the quota as it is. */
  function softError(
    stamp: TurnStamp,
    code: SoftErrorCode,
    state: QuotaState,
    detail?: ProblemDetail,
  ): { ok: false; decision: TurnDecision } {
    const { turnId, createdAt } = stamp;
    const details = detail === undefined ? {} : { detail };
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
    opening: Opening,
    claim: Claim | undefined,
    reservation: Reserved,
    stamp: TurnStamp,
    slot: Place | undefined,
  ): Promise<TurnDecision> {
    const { language, signal } = input;
    // The token reservation, once made: given back with the unit when nothing is delivered.
    let tokens: OpenTokens | undefined;
    const failed = async (decision: TurnDecision) => {
      await tokens?.settle(0);
      return refunded(reservation, decision);
    };
    const opened = await opening;
    if (opened?.ok === false)
      return failed({ kind: 'failed', code: 'internal_error', cause: opened.cause });
    const session = opened?.session;
    // What a client sent along follows what its session holds (the Responses door begins a
    // conversation with the items a client sent: docs/contract.md, "Responses API").
    const history =
      session === undefined || request.history === undefined
        ? (session?.history ?? lastTurns(request.history, config.sessionWindow))
        : lastTurns([...session.history, ...request.history], config.sessionWindow);
    const prompt = { message: request.message, history, instructions: request.instructions };
    const worst = turnTokens(input.key.tokens, request.sampling, prompt);
    const budget = await services.tokens.reserve(input.key, clock(), worst.worst);
    const quotaState =
      budget.state === undefined
        ? reservation.state
        : { ...reservation.state, tokens: budget.state };
    if (!budget.ok) {
      const { refusedBy } = budget;
      return failed({ kind: 'token_budget_exceeded', refusedBy, quota: quotaState });
    }
    tokens = budget.tokens;
    const settle = (charged: number) => {
      if (worst.worst > 0 && charged > 0) options.countTokens?.(input.key.plan, charged);
      return budget.tokens.settle(charged);
    };
    const coreRequest = {
      language,
      message: request.message,
      input: request.input,
      gateway: request.gateway,
      history,
      conversationId: session?.conversationId,
      onNotice: input.onNotice,
      instructions: request.instructions,
      sampling: worst.sampling,
    };
    const delivery = input.stream ? new Delivery(input.stream, signal) : undefined;
    const running = runCore(
      core,
      coreRequest,
      { client: signal, stopping, timeoutMs: config.coreTimeoutMs },
      delivery,
    );
    // The stream starts once the core has been asked (an upstream's request is on its way
    // while the front door builds its head): runCore passes deltas on only after an await,
    // so none comes before this.
    input.stream?.start(quotaState, stamp);
    const result = await running;
    // The core's connection is free for the next turn waiting for one.
    slot?.release();
    // A client that leaves once a part of the reply reached it has had it: the turn counts,
    // though nothing is stored or kept (docs/contract.md, "The client goes away").
    const gone = async (): Promise<TurnDecision> => {
      if (delivery?.delivered) {
        await settle(partialTokens(worst, delivery.text));
        return { kind: 'client_closed_after_delivery' };
      }
      await budget.tokens.settle(0);
      await reservation.refund({ hangUp: true });
      return { kind: 'client_closed' };
    };
    if (!result.ok) {
      if (result.code === 'client_closed') return gone();
      // A part of the reply reached the client: a failure after it (upstream error, reply
      // cap, deadline) still counts once, nothing stored or kept (docs/contract.md,
      // "Streamed replies").
      if (delivery?.delivered) return { kind: 'failed', code: result.code, cause: result.cause };
      return failed({ kind: 'failed', code: result.code, cause: result.cause });
    }
    // The client left while the core finished.
    if (signal.aborted) return gone();

    const { reply, finish } = result;
    // Estimated only when someone asks (/v1, MCP, a kept outcome): counting the characters
    // of a 20-turn history costs more than the rest of the turn's bookkeeping.
    let estimated: TokenUsage | undefined;
    const usage = () => {
      if (result.usage !== undefined) return result.usage;
      if (estimated === undefined) estimated = estimateUsage(coreRequest, reply);
      return estimated;
    };
    const record = async (): Promise<Recorded | 'fenced'> => {
      // Decoded for the seal only: a streamed reply stays held as bytes.
      const text = claim || session || input.keepWith ? replyString(reply) : '';
      const outcome = (): KeptOutcome => ({
        kind: 'reply',
        reply: text,
        language,
        usage: usage(),
        ...(finish === undefined ? {} : { finish }),
        ...stamp,
      });
      const kept = together(claim?.keep(outcome()), input.keepWith?.(decision));
      const turn = storedTurn(request, text, language, finish);
      const stored = session ? await session.record(turn, clock(), kept) : 'off';
      if (stored === 'stored') return stored;
      // Kept on its own; false when another attempt took the claim over (see below).
      return (await claim?.keepNow(outcome())) === false ? 'fenced' : stored;
    };
    // What the answer cost, once it is known to have been delivered (docs/quota-and-limits.md).
    const charge = async () => {
      // A plan without a budget has nothing to settle: the estimate is not counted for it.
      if (budget.tokens.reserved === 0) return;
      const charged = tokensOf(usage());
      if (result.usage !== undefined && charged > budget.tokens.reserved && worst.worst > 0) {
        input.onNotice?.({ kind: 'tokens_over_reservation', reserved: worst.worst, charged });
      }
      return settle(charged);
    };
    const decision = new ReplyDecision(reply, quotaState, stamp, usage, finish);
    const { handover } = input;
    if (handover) {
      // Answered with others: counted, stored and kept only if the answer leaves while the
      // client is still there (docs/contract.md, "The client goes away").
      handover.pending(
        handover.ready.then(async (delivered) => {
          if (delivered) return Promise.all([record().catch(() => {}), charge()]);
          await budget.tokens.settle(0);
          await reservation.refund({ hangUp: true });
          await claim?.release();
        }),
      );
      return decision;
    }
    // An attempt whose claim was taken over (its lease ran out) is fenced: nothing of it was
    // stored or kept, and its unit is the other attempt's now (docs/contract.md, "The
    // client goes away").
    const fenced: TurnDecision = { kind: 'idempotency_key_in_flight' };
    try {
      const recorded = await record();
      if (recorded === 'fenced') {
        await budget.tokens.settle(0);
        return fenced;
      }
      // Too large for the session's byte bound: answered, not stored (docs/sessions.md).
      decision.sessionTruncated = recorded === 'too_large';
    } catch (cause) {
      if (claimTakenOver(cause)) return fenced;
      return failed({ kind: 'failed', code: 'internal_error', cause });
    }
    // An answer written as one body reached the client only once it was written whole: a
    // client that left before is refunded like any hang-up before delivery (the turn and
    // its outcome stay: a retry with its Idempotency-Key is answered from them).
    if (!input.stream && input.handedOver) {
      void input.handedOver.then((whole) => {
        if (whole) return charge();
        void budget.tokens.settle(0);
        void reservation.refund({ hangUp: true }).catch(() => {});
      });
    } else {
      await charge();
    }
    return decision;
  }

  async function replay(key: TurnKey, outcome: KeptOutcome): Promise<TurnDecision> {
    const state = await quota.current(key, clock());
    const stamp = { turnId: outcome.turnId, createdAt: outcome.createdAt };
    if (outcome.kind === 'reply') {
      // Outcomes kept before usage was kept count the reply alone.
      const usage = outcome.usage ?? estimateUsage(undefined, outcome.reply);
      const { reply, finish } = outcome;
      return { kind: 'reply', reply, quota: state, usage, finish, replayed: true, ...stamp };
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

  return async function takeTurn(asked) {
    // A new input only when the core refuses the request: most turns take it as asked.
    const request = refusedByCore(asked.request);
    const input = request === asked.request ? asked : { ...asked, request };
    const header = parseIdempotencyKey(input.idempotencyKey);
    if (!header.ok) return { kind: 'idempotency_key_invalid' };
    if (header.key === undefined) return guarded(() => decide(input, undefined));
    // A request that cannot reach the core only looks the key up: it keeps nothing.
    if (!input.key.active || !input.request.ok) {
      let earlier: Awaited<ReturnType<typeof idempotency.earlier>>;
      try {
        earlier = await idempotency.earlier(input.key.id, header.key, input.fingerprint, clock());
      } catch (cause) {
        return { kind: 'failed', code: 'internal_error', cause };
      }
      if (earlier === undefined) return guarded(() => decide(input, undefined));
      return answerEarlier(input.key, earlier);
    }

    let claimed: Awaited<ReturnType<typeof idempotency.claim>>;
    try {
      claimed = await idempotency.claim(input.key.id, header.key, input.fingerprint, clock());
    } catch (cause) {
      return { kind: 'failed', code: 'internal_error', cause };
    }
    if (claimed.kind !== 'claimed') return answerEarlier(input.key, claimed);
    const { claim } = claimed;
    try {
      const decision = await guarded(() => decide(input, claim));
      // Only replies are kept (with the turn); anything else runs afresh.
      if (decision.kind !== 'reply') await claim.release();
      return decision;
    } finally {
      claim.close();
    }
  };

  function answerEarlier(key: TurnKey, earlier: EarlierRequest): Promise<TurnDecision> {
    switch (earlier.kind) {
      case 'replay':
        return guarded(() => replay(key, earlier.outcome));
      case 'in_flight':
        return Promise.resolve({ kind: 'idempotency_key_in_flight' });
      case 'reused':
        return Promise.resolve({ kind: 'idempotency_key_reused' });
    }
  }
}

/**
 * A delivered reply whose token counts are estimated only when a front door reads them.
 * A class, not an object literal with a getter: see test/house/object-literals.test.ts.
 */
class ReplyDecision {
  readonly kind = 'reply';
  readonly replayed = false;
  sessionTruncated = false;
  readonly turnId: string;
  readonly createdAt: number;
  readonly replyText: ReplyText | undefined;

  constructor(
    private readonly text: HeldReply,
    readonly quota: QuotaState,
    stamp: TurnStamp,
    private readonly countUsage: () => TokenUsage,
    readonly finish: CoreFinish | undefined,
  ) {
    this.turnId = stamp.turnId;
    this.createdAt = stamp.createdAt;
    this.replyText = typeof text === 'string' ? undefined : text;
  }

  get reply(): string {
    return replyString(this.text);
  }

  get usage(): TokenUsage {
    return this.countUsage();
  }
}

/**
 * A streamed turn's pieces on their way to the front door, and whether any reached the
 * client: once one has, the turn counts even if the client leaves before the end.
 */
class Delivery {
  delivered = false;
  /** The text that reached the client (what a turn delivered in part costs). */
  text = '';

  constructor(
    private readonly stream: TurnStream,
    private readonly client: CancelSignal,
  ) {}

  delta(text: string): void | Promise<void> {
    if (!this.client.aborted) {
      this.delivered = true;
      this.text += text;
    }
    return this.stream.delta(text);
  }

  toolCalls(deltas: readonly JsonObject[]): void | Promise<void> {
    if (!this.client.aborted) this.delivered = true;
    return this.stream.toolCalls?.(deltas);
  }
}

/**
 * The turn as the session keeps it: its text, and, when it held more than text (tool
 * results, images, tool calls), its Chat Completions messages, so that the next turn of an
 * agent loop sends them to the upstream again.
 */
function storedTurn(
  request: MessageRequest,
  reply: string,
  language: Language,
  finish: CoreFinish | undefined,
): Turn {
  const toolCalls = finish?.toolCalls;
  const sent = request.history ?? [];
  if (request.input === undefined && toolCalls === undefined && sent.length === 0) {
    return { message: request.message, reply, language };
  }
  // The turns a client sent along with a session's turn are kept with it, as messages.
  const input = [
    ...sent.flatMap(wireOf),
    ...(request.input ?? [{ role: 'user', content: request.message }]),
  ];
  const answer: WireMessage =
    toolCalls === undefined
      ? { role: 'assistant', content: reply }
      : {
          role: 'assistant',
          content: reply === '' ? null : reply,
          tool_calls: toolCalls.map((call) => ({
            id: call.id,
            type: call.type,
            function: { name: call.function.name, arguments: call.function.arguments },
          })),
        };
  return { message: request.message, reply, language, wire: [...input, answer] };
}

/** A turn as Chat Completions messages: its own, or its text as a user and an assistant message. */
function wireOf(turn: Turn): readonly WireMessage[] {
  if (turn.wire !== undefined) return turn.wire;
  const user: WireMessage[] = turn.message === '' ? [] : [{ role: 'user', content: turn.message }];
  return turn.reply === '' ? user : [...user, { role: 'assistant', content: turn.reply }];
}

/** Writes of two kinds committed together; undefined when there are none. */
function together(a: Writes | undefined, b: Writes | undefined): Writes | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return (work) => {
    a(work);
    b(work);
  };
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
