/**
 * @module routes/api/chat/chat-stream
 * The streamed answer of `/api/chat` and `/api/chat-en` (docs/contract.md, "Streamed replies"): once the turn use
 * case has passed every decision before the core, a 200 event stream with the headers of
 * the quota, then `delta` events (`{"text"}`), and at the end `done` (`{"reply"}`, the whole
 * reply) or `error` (`{"error": {"code", "message", "requestId"}}`) when the core failed
 * after the stream began. Only writes: what counts was decided by the use case.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TurnDecision, TurnStream } from '../../../chat/take-turn.js';
import { errorBody } from '../../../errors/api-error.js';
import type { ErrorCode } from '../../../errors/error-codes.js';
import { safeError } from '../../../errors/safe-error.js';
import { rateLimitHeaders } from '../../../quota/quota-service.js';
import { type EventStream, openEventStream } from '../../event-stream.js';

export interface ChatStream {
  /** Given to the use case: opens the stream at `start`, writes each delta. */
  readonly sink: TurnStream;
  /** Whether the stream began (the use case reached the core). */
  readonly started: boolean;
  /** Writes the decision's last event and ends the stream. */
  finish(decision: TurnDecision, request: FastifyRequest): Promise<FastifyReply>;
}

export function createChatStream(reply: FastifyReply, pingMs: number, stallMs: number): ChatStream {
  return new SseChatStream(reply, pingMs, stallMs);
}

/** A class, not an object literal with a getter: see test/house/object-literals.test.ts. */
class SseChatStream implements ChatStream {
  private events: EventStream | undefined;
  readonly sink: TurnStream;

  constructor(
    private readonly reply: FastifyReply,
    pingMs: number,
    stallMs: number,
  ) {
    this.sink = {
      start: (quota) => {
        this.events = openEventStream(reply, rateLimitHeaders(quota), pingMs, stallMs);
      },
      delta: (text) => {
        reply.request.partDelivered = true;
        this.events?.send(JSON.stringify({ text }), 'delta');
        return this.events?.ready();
      },
    };
  }

  get started(): boolean {
    return this.events !== undefined;
  }

  async finish(decision: TurnDecision, request: FastifyRequest): Promise<FastifyReply> {
    if (this.events) {
      // The last event (`done` repeats the whole reply) waits until the client has read the
      // rest, so a client that reads nothing holds no more of it (README, "Slow readers").
      await this.events.ready();
      finishStream(this.events, decision, request);
    }
    return this.reply;
  }
}

function finishStream(events: EventStream, decision: TurnDecision, request: FastifyRequest) {
  request.chatOutcome = decision.kind === 'soft_error' ? decision.code : decision.kind;
  switch (decision.kind) {
    case 'reply':
      events.send(JSON.stringify({ reply: decision.reply }), 'done');
      break;
    case 'failed':
      request.log.error(
        { error: safeError(decision.cause), code: decision.code },
        'request failed',
      );
      sendError(events, decision.code, request);
      break;
    case 'client_closed':
    case 'client_closed_after_delivery':
      // Nobody is left to read; the request was logged when its connection closed.
      break;
    case 'soft_error':
    case 'quota_exceeded':
    case 'rate_limited':
    case 'too_many_concurrent':
    case 'idempotency_key_invalid':
    case 'idempotency_key_in_flight':
    case 'idempotency_key_reused':
      // Decided before the core, so before any stream began: not expected here.
      sendError(events, 'internal_error', request);
      break;
    default:
      decision satisfies never;
  }
  events.end();
}

function sendError(events: EventStream, code: ErrorCode, request: FastifyRequest) {
  request.errorCode = code;
  events.send(JSON.stringify(errorBody(code, request.id)), 'error');
}

/** A kept reply replayed to a client that asked for a stream: one delta, then done. */
export function replayAsStream(
  decision: Extract<TurnDecision, { kind: 'reply' }>,
  reply: FastifyReply,
  pingMs: number,
): FastifyReply {
  const headers = rateLimitHeaders(decision.quota);
  if (decision.replayed) headers['idempotent-replayed'] = 'true';
  const events = openEventStream(reply, headers, pingMs);
  events.send(JSON.stringify({ text: decision.reply }), 'delta');
  events.send(JSON.stringify({ reply: decision.reply }), 'done');
  events.end();
  return reply;
}
