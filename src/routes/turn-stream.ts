/**
 * @module routes/turn-stream
 * A turn's streamed answer, the same for every front door that streams (`/api/chat`, `/v1`)
 * (docs/contract.md, "Streamed replies"): the stream opens when the use case reaches the
 * core, with the headers of the quota; each piece returns the wait for a slow reader; and the
 * decision that ends the turn is mapped here, once, to the door's end events. A door gives
 * only how its events are written (a {@link StreamDoor}). Only writes: what counts was
 * decided by the use case.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TurnDecision, TurnStamp, TurnStream } from '../chat/take-turn.js';
import type { JsonObject } from '../core/core-adapter.js';
import type { ErrorCode } from '../errors/error-codes.js';
import { safeError } from '../errors/safe-error.js';
import { rateLimitHeaders } from '../quota/quota-service.js';
import { type EventStream, openEventStream } from './event-stream.js';

type Reply = Extract<TurnDecision, { kind: 'reply' }>;

/** How a door writes its events on a stream that has begun. */
interface DoorEvents {
  delta(text: string): void;
  /** Tool-call deltas; a door without it leaves them out (and they deliver nothing). */
  toolCalls?(deltas: readonly JsonObject[]): void;
  /** The events that end a reply; a promise while a long one waits for the client. */
  done(decision: Reply): void | Promise<void>;
  /** The event that ends the stream with an error. */
  error(code: ErrorCode, requestId: string): void;
  /** What a kept reply replays before `done`; a promise as for `done`. */
  replay(decision: Reply): void | Promise<void>;
}

/** A door's events on a stream just opened; it writes what opens it (e.g. `/v1`'s role chunk). */
export type StreamDoor = (events: EventStream, stamp: TurnStamp) => DoorEvents;

export interface StreamTimes {
  readonly pingMs: number;
  /** How long a client may read nothing before it is cut off (src/routes/event-stream.ts). */
  readonly stallMs: number;
}

export interface TurnEventStream {
  /** Given to the use case: opens the stream at `start`, writes each piece. */
  readonly sink: TurnStream;
  /** Whether the stream began (the use case reached the core). */
  readonly started: boolean;
  /** Writes the decision's last events and ends the stream. */
  finish(decision: TurnDecision, request: FastifyRequest): Promise<FastifyReply>;
}

export function createTurnStream(
  reply: FastifyReply,
  door: StreamDoor,
  times: StreamTimes,
): TurnEventStream {
  return new SseTurnStream(reply, door, times);
}

/** A class, not an object literal with a getter: see test/house/object-literals.test.ts. */
class SseTurnStream implements TurnEventStream {
  private opened: { events: EventStream; door: DoorEvents } | undefined;
  readonly sink: TurnStream;

  constructor(
    private readonly reply: FastifyReply,
    door: StreamDoor,
    times: StreamTimes,
  ) {
    this.sink = {
      start: (quota, stamp) => {
        const events = openEventStream(reply, rateLimitHeaders(quota), times.pingMs, times.stallMs);
        this.opened = { events, door: door(events, stamp) };
      },
      delta: (text) => {
        reply.request.partDelivered = true;
        this.opened?.door.delta(text);
        return this.opened?.events.ready();
      },
      toolCalls: (deltas) => {
        if (this.opened?.door.toolCalls === undefined) return undefined;
        reply.request.partDelivered = true;
        this.opened.door.toolCalls(deltas);
        return this.opened.events.ready();
      },
    };
  }

  get started(): boolean {
    return this.opened !== undefined;
  }

  async finish(decision: TurnDecision, request: FastifyRequest): Promise<FastifyReply> {
    if (this.opened) {
      // The last events (`done` repeats the whole reply) wait until the client has read the
      // rest, so a client that reads nothing holds no more of it (docs/streaming.md, "Slow
      // readers").
      await this.opened.events.ready();
      await finishStream(this.opened.door, decision, request);
      this.opened.events.end();
    }
    return this.reply;
  }
}

/** The one mapping of a decision, after the stream began, to the door's end events. */
function finishStream(
  door: DoorEvents,
  decision: TurnDecision,
  request: FastifyRequest,
): void | Promise<void> {
  request.chatOutcome = decision.kind === 'soft_error' ? decision.code : decision.kind;
  switch (decision.kind) {
    case 'reply':
      return door.done(decision);
    case 'failed':
      request.log.error(
        { error: safeError(decision.cause), code: decision.code },
        'request failed',
      );
      request.errorCode = decision.code;
      door.error(decision.code, request.id);
      break;
    case 'client_closed':
    case 'client_closed_after_delivery':
      // Nobody is left to read; the request was logged when its connection closed.
      break;
    case 'soft_error':
    case 'quota_exceeded':
    case 'rate_limited':
    case 'token_budget_exceeded':
    case 'too_many_concurrent':
    case 'idempotency_key_invalid':
    case 'idempotency_key_in_flight':
    case 'idempotency_key_reused':
      // Decided before the core, so before any stream began: not expected here.
      request.errorCode = 'internal_error';
      door.error('internal_error', request.id);
      break;
    default:
      decision satisfies never;
  }
}

/**
 * A kept reply replayed to a client that asked for a stream, as the door replays it; a long
 * one waits for the client as a live stream does.
 */
export async function replayStream(
  decision: Reply,
  reply: FastifyReply,
  door: StreamDoor,
  times: StreamTimes,
): Promise<FastifyReply> {
  const headers = rateLimitHeaders(decision.quota);
  if (decision.replayed) headers['idempotent-replayed'] = 'true';
  const events = openEventStream(reply, headers, times.pingMs, times.stallMs);
  const writer = door(events, decision);
  await writer.replay(decision);
  await events.ready();
  await writer.done(decision);
  events.end();
  return reply;
}
