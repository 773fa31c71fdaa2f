/**
 * @module routes/v1/completion-stream
 * The streamed answer of `/v1/chat/completions`: once the turn use case has passed every
 * decision before the core, a 200 event stream of `chat.completion.chunk`s (the role at
 * once, then each delta), ended by the finish chunk, the usage chunk when asked for and
 * `data: [DONE]`, or by `data: {"error": ...}` when the core failed after the stream began
 * (OpenAI's clients raise it as an APIError). Only writes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TurnDecision, TurnStamp, TurnStream } from '../../chat/take-turn.js';
import type { TokenUsage } from '../../core/core-adapter.js';
import type { ErrorCode } from '../../errors/error-codes.js';
import { safeError } from '../../errors/safe-error.js';
import { type QuotaState, rateLimitHeaders } from '../../quota/quota-service.js';
import { type EventStream, openEventStream } from '../event-stream.js';
import { chunkWriter, DONE, openAiErrorOf } from './completion-answer.js';

export interface CompletionStreamOptions {
  readonly model: string;
  readonly includeUsage: boolean;
  readonly pingMs: number;
  /** How long a client may read nothing before it is cut off (src/routes/event-stream.ts). */
  readonly stallMs: number;
}

export interface CompletionStream {
  readonly sink: TurnStream;
  readonly started: boolean;
  finish(decision: TurnDecision, request: FastifyRequest): Promise<FastifyReply>;
}

interface Open {
  readonly events: EventStream;
  readonly chunks: ReturnType<typeof chunkWriter>;
}

function open(
  reply: FastifyReply,
  quota: QuotaState,
  stamp: TurnStamp,
  options: CompletionStreamOptions,
  extraHeaders: Readonly<Record<string, string>> = {},
): Open {
  const headers = Object.assign(rateLimitHeaders(quota), extraHeaders);
  const events = openEventStream(reply, headers, options.pingMs, options.stallMs);
  const chunks = chunkWriter(stamp, options.model, options.includeUsage);
  events.open(chunks.role());
  return { events, chunks };
}

export function createCompletionStream(
  reply: FastifyReply,
  options: CompletionStreamOptions,
): CompletionStream {
  return new SseCompletionStream(reply, options);
}

/** A class, not an object literal with a getter: see test/house/object-literals.test.ts. */
class SseCompletionStream implements CompletionStream {
  private opened: Open | undefined;
  readonly sink: TurnStream;

  constructor(
    private readonly reply: FastifyReply,
    options: CompletionStreamOptions,
  ) {
    this.sink = {
      start: (quota, stamp) => {
        this.opened = open(reply, quota, stamp, options);
      },
      delta: (text) => {
        reply.request.partDelivered = true;
        this.opened?.events.send(this.opened.chunks.content(text));
        return this.opened?.events.ready();
      },
      toolCalls: (deltas) => {
        reply.request.partDelivered = true;
        this.opened?.events.send(this.opened.chunks.toolCalls(deltas));
        return this.opened?.events.ready();
      },
    };
  }

  get started(): boolean {
    return this.opened !== undefined;
  }

  async finish(decision: TurnDecision, request: FastifyRequest): Promise<FastifyReply> {
    if (this.opened) {
      // The last chunks wait until the client has read the rest (README, "Slow readers").
      await this.opened.events.ready();
      finishStream(this.opened, decision, request);
    }
    return this.reply;
  }
}

function finishStream(opened: Open, decision: TurnDecision, request: FastifyRequest) {
  request.chatOutcome = decision.kind === 'soft_error' ? decision.code : decision.kind;
  switch (decision.kind) {
    case 'reply':
      sendEnd(opened, decision.usage, decision.finish?.reason);
      break;
    case 'failed':
      request.log.error(
        { error: safeError(decision.cause), code: decision.code },
        'request failed',
      );
      sendError(opened.events, decision.code, request);
      break;
    case 'client_closed':
    case 'client_closed_after_delivery':
      break;
    case 'soft_error':
    case 'quota_exceeded':
    case 'rate_limited':
    case 'too_many_concurrent':
    case 'idempotency_key_invalid':
    case 'idempotency_key_in_flight':
    case 'idempotency_key_reused':
      // Decided before the core, so before any stream began: not expected here.
      sendError(opened.events, 'internal_error', request);
      break;
    default:
      decision satisfies never;
  }
  opened.events.end();
}

function sendEnd({ events, chunks }: Open, usage: TokenUsage, reason?: string) {
  events.send(chunks.finish(reason));
  const usageChunk = chunks.usage(usage);
  if (usageChunk !== undefined) events.send(usageChunk);
  events.send(DONE);
}

function sendError(events: EventStream, code: ErrorCode, request: FastifyRequest) {
  request.errorCode = code;
  events.send(JSON.stringify(openAiErrorOf(code).body));
}

/** A kept reply replayed to a request that asked for a stream: the same chunks, one delta. */
export function replayCompletionStream(
  decision: Extract<TurnDecision, { kind: 'reply' }>,
  reply: FastifyReply,
  options: CompletionStreamOptions,
): FastifyReply {
  const replayed: Record<string, string> = decision.replayed
    ? { 'idempotent-replayed': 'true' }
    : {};
  const opened = open(reply, decision.quota, decision, options, replayed);
  if (decision.reply !== '') opened.events.send(opened.chunks.content(decision.reply));
  const toolCalls = decision.finish?.toolCalls;
  if (toolCalls !== undefined) {
    const deltas = toolCalls.map((call, index) => ({
      index,
      id: call.id,
      type: call.type,
      function: { name: call.function.name, arguments: call.function.arguments },
    }));
    opened.events.send(opened.chunks.toolCalls(deltas));
  }
  sendEnd(opened, decision.usage, decision.finish?.reason);
  opened.events.end();
  return reply;
}
