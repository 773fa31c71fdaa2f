/**
 * @module routes/v1/responses/responses-routes
 * OpenAI's Responses API (docs/contract.md, "Responses API"): `POST /v1/responses`,
 * `GET /v1/responses/{id}` and `DELETE /v1/responses/{id}`, registered by the `/v1` routes
 * (v1-routes.ts), whose error handler answers every failure in OpenAI's shape. A response is
 * a turn of the same use case as a chat completion (src/chat/take-turn.ts): this door only
 * reads the body (responses-request.ts), looks up what it names among the key's kept
 * responses, and writes the decision back (responses-answer.ts).
 *
 * Conversations: a kept response (`store`, the default) is a turn of a session of its key
 * (src/sessions/). A response without `previous_response_id` begins a session of its own,
 * under a random name no client can send; `previous_response_id` continues the session of
 * that response; `X-Session-Id` names the session as on /v1/chat/completions. The response
 * object is kept with its turn, in the same transaction (src/sessions/response-store.ts).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ReplyOf, TurnDecision, TurnRequest } from '../../../chat/take-turn.js';
import type { JsonObject, Turn } from '../../../core/core-adapter.js';
import { ERROR_MESSAGES } from '../../../errors/error-codes.js';
import { rateLimitHeaders } from '../../../quota/quota-service.js';
import type { AuthenticatedKey } from '../../authenticate.js';
import { authenticate } from '../../authenticate.js';
import { clientSignal, handedOver, turnWaitHook } from '../../client-signal.js';
import { refuse } from '../../refusals.js';
import { judgeContentTypeLater } from '../../request-body.js';
import { RATE_LIMIT_HEADERS, withHeaders } from '../../responses.js';
import { bearerSecurity } from '../../schemas.js';
import { createTurnStream, replayStream, type StreamTimes } from '../../turn-stream.js';
import { MODEL_NOT_FOUND, openAiError, openAiStatus } from '../completion-answer.js';
import type { V1RouteDeps } from '../v1-routes.js';
import { completionHeaders } from '../v1-schemas.js';
import {
  outputItems,
  responseId,
  responseObject,
  responseOfItem,
  responsesEvents,
  type StreamOrder,
} from './responses-answer.js';
import {
  ITEM_NOT_FOUND,
  PREVIOUS_NOT_FOUND,
  parseResponsesRequest,
  type ResponsesRequest,
  type TurnContext,
  turnOf,
} from './responses-request.js';
import {
  deletedSchema,
  responseAnswerSchema,
  responseIdParams,
  responseObjectSchema,
  responsesErrors,
  responsesRequestSchema,
  storedErrors,
} from './responses-schemas.js';

export const RESPONSES_ROUTE = '/v1/responses';

type Authenticated = (request: FastifyRequest) => AuthenticatedKey;

/** Registered inside the `/v1` routes, after their error handler and hooks. */
export function responsesRoutes(
  app: FastifyInstance,
  deps: V1RouteDeps,
  authenticateFirst: (request: FastifyRequest) => Promise<void>,
  keyOf: Authenticated,
): void {
  app.post(
    '/responses',
    {
      schema: {
        summary: "A response (OpenAI's Responses API), plain or streamed",
        tags: ['openai'],
        security: bearerSecurity,
        headers: completionHeaders,
        body: responsesRequestSchema,
        response: {
          200: withHeaders(responseAnswerSchema, [...RATE_LIMIT_HEADERS, 'Idempotent-Replayed']),
          ...responsesErrors,
        },
      },
      // The schemas document the body; the use case judges it, in the contract's order.
      validatorCompiler: () => () => true,
      bodyLimit: deps.services.config.completionBodyLimitBytes,
      onRequest: [judgeContentTypeLater, authenticateFirst],
    },
    (request, reply) => handleResponse(deps, keyOf(request), request, reply),
  );

  app.get<{ Params: { id: string } }>(
    '/responses/:id',
    {
      schema: {
        summary: 'A kept response',
        tags: ['openai'],
        security: bearerSecurity,
        params: responseIdParams,
        response: { 200: responseObjectSchema, ...storedErrors },
      },
    },
    async (request, reply) => {
      const key = await authenticate(deps.services, request);
      const kept = await deps.services.responses.find(
        key.id,
        request.params.id,
        deps.services.clock(),
      );
      if (kept === undefined) return notFound(request, reply);
      return kept.response;
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/responses/:id',
    {
      schema: {
        summary: 'Deletes a kept response',
        tags: ['openai'],
        security: bearerSecurity,
        params: responseIdParams,
        response: { 200: deletedSchema, ...storedErrors },
      },
    },
    async (request, reply) => {
      const key = await authenticate(deps.services, request);
      const { services } = deps;
      const now = services.clock();
      const deleted = await services.responses.delete(key.id, request.params.id, now);
      if (deleted === undefined) return notFound(request, reply);
      // A conversation this door began goes with its last kept response: nothing of it stays.
      if (deleted.kept.own && !deleted.others) {
        await services.sessions.delete(key.id, deleted.kept.sessionId, now);
      }
      return { id: request.params.id, object: 'response', deleted: true };
    },
  );
}

/** The id is not echoed: a key pasted into the wrong place would land in the answer. */
function notFound(request: FastifyRequest, reply: FastifyReply) {
  request.errorCode = 'not_found';
  const { status, type } = openAiStatus('not_found');
  const message = 'No response with that id is kept for this key.';
  return reply.code(status).send(openAiError('not_found', type, message, null));
}

async function handleResponse(
  deps: V1RouteDeps,
  key: AuthenticatedKey,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const { services } = deps;
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const sessionHeader = request.headers['x-session-id'];
  const parsed = parseResponsesRequest(request.headers['content-type'], request.body);
  const { turn, conversation } = await readTurn(deps, key, parsed, sessionHeader);
  const times = { pingMs: deps.pingMs, stallMs: services.config.limits.streamStallTimeoutMs };
  const order: StreamOrder = { textFirst: true };
  const events = responsesEvents(parsed.model, parsed.echo, order);
  const stream = parsed.stream ? createTurnStream(reply, events, times) : undefined;
  // The session is part of what the request means: another X-Session-Id is another request.
  const endpoint =
    typeof sessionHeader === 'string' ? `${RESPONSES_ROUTE} ${sessionHeader}` : RESPONSES_ROUTE;
  const keepWith =
    conversation === undefined
      ? undefined
      : (answer: ReplyOf) =>
          services.responses.keep(
            key.id,
            responseId(answer),
            {
              ...conversation,
              response: responseObject(answer, parsed.model, parsed.echo, {
                status: 'done',
                answer,
                textFirst: order.textFirst,
              }) as unknown as JsonObject,
            },
            answer.createdAt,
          );
  const decision = await deps.takeTurn({
    key,
    language: parsed.language,
    request: turn,
    idempotencyKey: request.headers['idempotency-key'],
    fingerprint: { endpoint, body },
    signal: clientSignal(reply),
    handedOver: handedOver(reply),
    onWait: turnWaitHook(request),
    onNotice: (notice) => request.log.warn({ notice }, 'core notice'),
    ...(stream ? { stream: stream.sink } : {}),
    ...(keepWith ? { keepWith } : {}),
  });
  if (stream?.started) return stream.finish(decision, request);
  return render(decision, parsed, request, reply, events, times);
}

/** The conversation a kept response belongs to (see the module comment). */
interface Conversation {
  readonly sessionId: string;
  readonly own: boolean;
}

/**
 * The turn request, once what the body names is looked up: the response it continues and
 * the items it refers to, all among the key's kept responses. Not found: a refusal naming
 * the parameter, answered by the use case like any other (404, before anything is counted).
 */
async function readTurn(
  deps: V1RouteDeps,
  key: AuthenticatedKey,
  parsed: ResponsesRequest,
  sessionHeader: string | string[] | undefined,
): Promise<{ turn: TurnRequest; conversation?: Conversation }> {
  const { body, language, store } = parsed;
  if (!body.ok) return { turn: body.refusal };
  const { services } = deps;
  const now = services.clock();
  const messageMaxChars = services.config.messageMaxChars;
  const items = new Map<string, JsonObject>();
  for (const id of new Set(body.references)) {
    const owner = responseOfItem(id);
    const kept =
      owner === undefined ? undefined : await services.responses.find(key.id, owner, now);
    const item = kept === undefined ? undefined : outputItems(kept.response).get(id);
    if (item !== undefined) items.set(id, item);
  }
  const translated = body.completion(items);
  const context = (more: Partial<TurnContext>): TurnContext => ({
    sessionHeader,
    messageMaxChars,
    ...more,
  });
  const { previousResponseId } = body;
  if (previousResponseId === undefined) {
    if (typeof sessionHeader === 'string') {
      const turn = turnOf(translated, language, context({}));
      return store ? { turn, conversation: { sessionId: sessionHeader, own: false } } : { turn };
    }
    if (!store) return { turn: turnOf(translated, language, context({})) };
    // A new conversation, under a name no client can send (X-Session-Id has no spaces).
    const sessionId = `response conversation ${randomUUID()}`;
    const turn = turnOf(translated, language, context({ sessionId }));
    return { turn, conversation: { sessionId, own: true } };
  }
  if (sessionHeader !== undefined) {
    return {
      turn: refused(
        'previous_response_id',
        'previous_response_id and X-Session-Id both name a conversation: send one of them.',
      ),
    };
  }
  const previous = await services.responses.find(key.id, previousResponseId, now);
  if (previous === undefined) {
    return {
      turn: refused(
        'previous_response_id',
        'No kept response with that previous_response_id: it is unknown, deleted, expired or of another key.',
        PREVIOUS_NOT_FOUND,
      ),
    };
  }
  const conversation = { sessionId: previous.sessionId, own: previous.own };
  if (store) {
    const turn = turnOf(translated, language, context({ sessionId: conversation.sessionId }));
    return { turn, conversation };
  }
  // Continued but not kept: the conversation is read, and nothing is added to it.
  const history: readonly Turn[] = (
    await services.sessions.open(key.id, conversation.sessionId, now)
  ).history;
  return { turn: turnOf(translated, language, context({ history })) };
}

function refused(param: string, message: string, code?: string): TurnRequest {
  return {
    ok: false,
    code: 'body_invalid',
    detail: { param, message, ...(code === undefined ? {} : { code }) },
  };
}

/** The codes of this door answered 404 (a model it does not offer, something not kept). */
const NOT_FOUND_CODES = new Set([MODEL_NOT_FOUND, PREVIOUS_NOT_FOUND, ITEM_NOT_FOUND]);

function render(
  decision: TurnDecision,
  parsed: ResponsesRequest,
  request: FastifyRequest,
  reply: FastifyReply,
  events: ReturnType<typeof responsesEvents>,
  times: StreamTimes,
) {
  request.chatOutcome = decision.kind === 'soft_error' ? decision.code : decision.kind;
  switch (decision.kind) {
    case 'reply':
      if (parsed.stream) return replayStream(decision, reply, events, times);
      reply.headers(rateLimitHeaders(decision.quota));
      if (decision.replayed) reply.header('idempotent-replayed', 'true');
      return responseObject(decision, parsed.model, parsed.echo, {
        status: 'done',
        answer: decision,
      });
    case 'soft_error': {
      const { code, detail } = decision;
      reply.headers(rateLimitHeaders(decision.quota));
      if (decision.replayed) reply.header('idempotent-replayed', 'true');
      const notFound = detail?.code !== undefined && NOT_FOUND_CODES.has(detail.code);
      const { status, type } = openAiStatus(notFound ? MODEL_NOT_FOUND : code);
      return reply
        .code(status)
        .send(
          openAiError(
            detail?.code ?? code,
            type,
            detail?.message ?? ERROR_MESSAGES[code],
            detail?.param ?? null,
          ),
        );
    }
    default:
      return refuse(decision, reply);
  }
}
