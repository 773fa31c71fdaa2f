/**
 * @module routes/api/chat/chat-routes
 * `POST /api/chat` (German) and `POST /api/chat-en` (English): a front door of the turn use
 * case (src/chat/take-turn.ts). It reads the request and renders the decision; it decides
 * nothing. The body is kept as raw bytes and judged by the use case only after the key, the
 * idempotency key, the plan and the quota, because a bad key must get 401 whatever the body.
 *
 * Streamed (docs/contract.md, "Streamed replies": `Accept: text/event-stream` or `"stream": true`): the use case
 * says when every decision before the core has passed; only then does the 200 event stream
 * begin (src/routes/turn-stream.ts), with `delta` events (`{"text"}`) and at the end `done`
 * (`{"reply"}`, the whole reply) or `error` (`{"error": {"code", "message", "requestId"}}`)
 * when the core failed after the stream began. Every earlier decision answers exactly as
 * without streaming.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { jsonStringPieces, type ReplyText } from '../../../chat/reply-text.js';
import type { TakeTurn, TurnDecision, TurnRequest } from '../../../chat/take-turn.js';
import type { Language } from '../../../core/core-adapter.js';
import { errorBody } from '../../../errors/api-error.js';
import { ERROR_MESSAGES } from '../../../errors/error-codes.js';
import { rateLimitHeaders } from '../../../quota/quota-service.js';
import type { AppDeps } from '../../../services.js';
import { authenticate } from '../../authenticate.js';
import { clientSignal, handedOver, turnWaitHook } from '../../client-signal.js';
import { acceptsEventStream } from '../../event-stream.js';
import { REFUSAL_CODES, refuse } from '../../refusals.js';
import { judgeContentTypeLater, parseChatFields, parseJsonObject } from '../../request-body.js';
import { errorResponses } from '../../responses.js';
import {
  bearerSecurity,
  chatAnswerSchema,
  chatRequestSchema,
  idempotencyKeyHeader,
} from '../../schemas.js';
import { createTurnStream, replayStream, type StreamDoor } from '../../turn-stream.js';
import { SOFT_REPLIES } from './soft-replies.js';

const ENDPOINTS: ReadonlyArray<{ url: string; language: Language; summary: string }> = [
  { url: '/api/chat', language: 'de', summary: 'Chat in German' },
  { url: '/api/chat-en', language: 'en', summary: 'Chat in English' },
];

/** A reply in each language, for the OpenAPI document. */
const EXAMPLE_REPLIES: Readonly<Record<Language, string>> = {
  de: 'Hallo! Wie kann ich helfen?',
  en: 'Hello! How can I help?',
};

const CHAT_ERRORS = errorResponses(['invalid_api_key', 'payload_too_large', ...REFUSAL_CODES]);

export interface ChatRouteDeps extends AppDeps {
  readonly takeTurn: TakeTurn;
  /** How long a streamed reply may stay silent before a `: ping` comment. */
  readonly pingMs: number;
}

/** The request example of each endpoint, in its language. */
const EXAMPLE_MESSAGES = { de: 'Hallo!', en: 'Hello!' } as const;

export async function chatRoutes(app: FastifyInstance, deps: ChatRouteDeps): Promise<void> {
  for (const endpoint of ENDPOINTS) {
    const { language } = endpoint;
    app.post(
      endpoint.url,
      {
        schema: {
          summary: endpoint.summary,
          tags: ['chat'],
          security: bearerSecurity,
          headers: idempotencyKeyHeader,
          // A real first message, not streamed: /docs' "Try it out" then shows a reply.
          body: { ...chatRequestSchema, examples: [{ message: EXAMPLE_MESSAGES[language] }] },
          response: {
            200: chatAnswerSchema(
              EXAMPLE_REPLIES[language],
              SOFT_REPLIES.message_missing[language],
            ),
            ...CHAT_ERRORS,
          },
        },
        // The schemas document the request; the use case judges it, in the contract's order.
        validatorCompiler: () => () => true,
        onRequest: judgeContentTypeLater,
      },
      (request, reply) => handleChat(deps, endpoint, request, reply),
    );
  }
}

async function handleChat(
  deps: ChatRouteDeps,
  endpoint: { url: string; language: Language },
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const { services } = deps;
  const key = await authenticate(services, request);
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const { turnRequest, streamed } = readChatBody(request, services.config.messageMaxChars);
  const times = { pingMs: deps.pingMs, stallMs: services.config.limits.streamStallTimeoutMs };
  const stream = streamed ? createTurnStream(reply, chatEvents, times) : undefined;
  const decision = await deps.takeTurn({
    key,
    language: endpoint.language,
    request: turnRequest,
    idempotencyKey: request.headers['idempotency-key'],
    fingerprint: { endpoint: endpoint.url, body },
    signal: clientSignal(reply),
    handedOver: handedOver(reply),
    onWait: turnWaitHook(request),
    onNotice: (notice) => request.log.warn({ notice }, 'core notice'),
    ...(stream ? { stream: stream.sink } : {}),
  });
  if (stream?.started) return stream.finish(decision, request);
  if (streamed && decision.kind === 'reply') {
    request.chatOutcome = decision.kind;
    return replayStream(decision, reply, chatEvents, times);
  }
  return render(decision, endpoint.language, request, reply);
}

/**
 * The events of a streamed chat reply; a kept reply replays as one delta. `done` repeats the
 * whole reply: it is written from the reply as it is held (a streamed one as its bytes), in
 * pieces that each wait for the client (docs/streaming.md, "Slow readers").
 */
const chatEvents: StreamDoor = (events) => ({
  delta: (text) => events.send(JSON.stringify({ text }), 'delta'),
  done: (decision) => events.sendPieces('done', jsonObjectPieces('reply', decision)),
  error: (code, requestId) => events.send(JSON.stringify(errorBody(code, requestId)), 'error'),
  replay: (decision) => events.sendPieces('delta', jsonObjectPieces('text', decision)),
});

/** `{"<field>": <the reply>}` in pieces. */
function* jsonObjectPieces(
  field: 'reply' | 'text',
  decision: { readonly reply: string; readonly replyText?: ReplyText },
): Generator<string> {
  yield `{"${field}":`;
  yield* jsonStringPieces(decision.replyText ?? decision.reply);
  yield '}';
}

/** The body's fields (rows 4-8) and whether a stream was asked for, from one parse. */
function readChatBody(
  request: FastifyRequest,
  messageMaxChars: number,
): { turnRequest: TurnRequest; streamed: boolean } {
  const object = parseJsonObject(request.headers['content-type'], request.body);
  const turnRequest: TurnRequest =
    object === undefined
      ? { ok: false, code: 'body_invalid' }
      : parseChatFields(object, messageMaxChars);
  const streamed = acceptsEventStream(request.headers.accept) || object?.stream === true;
  return { turnRequest, streamed };
}

function render(
  decision: TurnDecision,
  language: Language,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  request.chatOutcome = decision.kind === 'soft_error' ? decision.code : decision.kind;
  switch (decision.kind) {
    case 'reply':
      reply.headers(rateLimitHeaders(decision.quota));
      if (decision.replayed) reply.header('idempotent-replayed', 'true');
      // The turn was not stored: larger than the session's byte bound (docs/sessions.md).
      if (decision.sessionTruncated) reply.header('x-session-truncated', 'true');
      return { reply: decision.reply };
    case 'soft_error': {
      const { code } = decision;
      reply.headers(rateLimitHeaders(decision.quota));
      if (decision.replayed) reply.header('idempotent-replayed', 'true');
      return {
        reply: SOFT_REPLIES[code][language],
        error: { code, message: ERROR_MESSAGES[code] },
      };
    }
    default:
      return refuse(decision, reply);
  }
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The turn's outcome (`reply`, a soft error code, ...), for logs and metrics. */
    chatOutcome?: string;
    /** A part of a streamed reply was written: a hang-up after it counts the turn. */
    partDelivered?: boolean;
    /** How long the turn waited for its key's place (docs/contract.md, "Burst limits"). */
    turnWaitMs?: number;
  }
}
