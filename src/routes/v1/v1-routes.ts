/**
 * @module routes/v1/v1-routes
 * The OpenAI-compatible front door (docs/contract.md, "OpenAI-compatible door"): `POST /v1/chat/completions` and
 * `GET /v1/models` (and OpenAI's Responses API: responses/responses-routes.ts), for clients, SDKs and agent frameworks that speak OpenAI's Chat
 * Completions. Same keys, plans, quotas, limits, headers, idempotency, logs and metrics as
 * `/api/chat`: a chat completion is a turn of the same use case (src/chat/take-turn.ts),
 * read from OpenAI's body and written in OpenAI's shapes. Every failure under `/v1`,
 * unknown routes included, is answered in OpenAI's error shape.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TakeTurn, TurnDecision } from '../../chat/take-turn.js';
import type { ApiError } from '../../errors/api-error.js';
import { ERROR_MESSAGES, type ErrorCode, SOFT_ERROR_CODES } from '../../errors/error-codes.js';
import { toApiError } from '../../errors/error-handler.js';
import { safeError } from '../../errors/safe-error.js';
import { rateLimitHeaders } from '../../quota/quota-service.js';
import type { AppDeps } from '../../services.js';
import { type AuthenticatedKey, authenticate, authenticateBeforeBody } from '../authenticate.js';
import { clientSignal, handedOver, turnWaitHook } from '../client-signal.js';
import { REFUSAL_CODES, refuse } from '../refusals.js';
import { judgeContentTypeLater } from '../request-body.js';
import { RATE_LIMIT_HEADERS, withHeaders } from '../responses.js';
import { bearerSecurity } from '../schemas.js';
import {
  createTurnStream,
  replayStream,
  type StreamDoor,
  type StreamTimes,
} from '../turn-stream.js';
import {
  chatCompletion,
  completionEvents,
  MODEL_NOT_FOUND,
  openAiError,
  openAiErrorOf,
  openAiStatus,
} from './completion-answer.js';
import { type CompletionRequest, MODELS, parseCompletionRequest } from './completion-request.js';
import { anthropicModels, messagesRoutes, speaksAnthropic } from './messages/messages-routes.js';
import { anthropicModelListSchema, anthropicModelSchema } from './messages/messages-schemas.js';
import { responsesRoutes } from './responses/responses-routes.js';
import {
  completionAnswerSchema,
  completionHeaders,
  completionRequestSchema,
  modelListSchema,
  modelSchema,
  openAiErrorResponses,
  openAiErrorSchema,
} from './v1-schemas.js';

export const COMPLETIONS_ROUTE = '/v1/chat/completions';

export interface V1RouteDeps extends AppDeps {
  readonly takeTurn: TakeTurn;
  readonly pingMs: number;
}

/**
 * As on /api/chat, and the soft errors as OpenAI's: a refused body is 400 (with `param`),
 * an inactive plan 403 and a model plauder does not offer 404, both with the RateLimit
 * headers (refusals of the turn after the key).
 */
const COMPLETION_ERRORS = openAiErrorResponses(
  [...SOFT_ERROR_CODES, MODEL_NOT_FOUND, 'invalid_api_key', 'payload_too_large', ...REFUSAL_CODES],
  { 403: RATE_LIMIT_HEADERS, 404: RATE_LIMIT_HEADERS },
);

/** The answer to an unknown path under /v1: the endpoints there are (the path is not echoed). */
const V1_NOT_FOUND =
  'No such endpoint under /v1. plauder serves: POST /v1/chat/completions (Chat Completions), ' +
  'POST /v1/responses, GET and DELETE /v1/responses/{id} (Responses), POST /v1/messages and ' +
  'POST /v1/messages/count_tokens (Anthropic Messages), GET /v1/models and /v1/models/{model}.';

/** When the models were first offered: OpenAI lists a model's creation time. */
const MODELS_CREATED = 1_767_225_600;

/** Registered with the prefix `/v1`. */
export async function v1Routes(app: FastifyInstance, deps: V1RouteDeps): Promise<void> {
  // Images make bodies larger than /api/chat's: only a known key's body is read.
  const { hook: authenticateFirst, keyOf } = authenticateBeforeBody(deps.services);
  app.addSchema(openAiErrorSchema);
  app.setErrorHandler(renderError);
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (!retryCanHelp(reply.statusCode, reply.getHeader('retry-after'))) {
      reply.header('x-should-retry', 'false');
    }
    done(null, payload);
  });
  // A client asking for an API plauder does not serve learns which ones it does.
  app.setNotFoundHandler((request, reply) => {
    request.errorCode = 'not_found';
    const { status, type } = openAiStatus('not_found');
    return reply.code(status).send(openAiError('not_found', type, V1_NOT_FOUND));
  });
  // Anthropic's Messages door, with its own error shape (docs/contract.md, "Anthropic's
  // Messages door").
  await app.register(messagesRoutes, { ...deps, prefix: '/messages' });

  app.get(
    '/models',
    {
      schema: {
        summary: 'The models: plauder-de and plauder-en (the language of the reply)',
        description: "With `anthropic-version` in Anthropic's shapes (its errors too).",
        tags: ['openai', 'anthropic'],
        security: bearerSecurity,
        // A GET has no body to refuse and no model to miss: only the key can fail.
        response: {
          200: { anyOf: [modelListSchema, anthropicModelListSchema] },
          ...openAiErrorResponses(['invalid_api_key']),
        },
      },
    },
    async (request, reply) => {
      if (speaksAnthropic(request)) return anthropicModels(deps.services, request, reply);
      await authenticate(deps.services, request);
      return { object: 'list', data: Object.keys(MODELS).map(modelObject) };
    },
  );

  app.get<{ Params: { model: string } }>(
    '/models/:model',
    {
      schema: {
        summary: 'One model',
        description: "With `anthropic-version` in Anthropic's shapes (its errors too).",
        tags: ['openai', 'anthropic'],
        security: bearerSecurity,
        params: { type: 'object', properties: { model: { type: 'string' } } },
        response: {
          200: { anyOf: [modelSchema, anthropicModelSchema] },
          ...openAiErrorResponses(['invalid_api_key', MODEL_NOT_FOUND]),
        },
      },
    },
    async (request, reply) => {
      const { model } = request.params;
      if (speaksAnthropic(request)) return anthropicModels(deps.services, request, reply, model);
      await authenticate(deps.services, request);
      if (MODELS[model] !== undefined) return modelObject(model);
      // The path is not echoed: a key pasted into the wrong place would land in the answer.
      const message = `No such model. Use one of: ${Object.keys(MODELS).join(', ')}.`;
      const { status, type } = openAiStatus(MODEL_NOT_FOUND);
      request.errorCode = 'not_found';
      return reply.code(status).send(openAiError(MODEL_NOT_FOUND, type, message, 'model'));
    },
  );

  app.post(
    '/chat/completions',
    {
      schema: {
        summary: 'Chat completion (OpenAI-compatible), plain or streamed',
        tags: ['openai'],
        security: bearerSecurity,
        headers: completionHeaders,
        body: completionRequestSchema,
        response: {
          200: withHeaders(completionAnswerSchema, [...RATE_LIMIT_HEADERS, 'Idempotent-Replayed']),
          ...COMPLETION_ERRORS,
        },
      },
      // The schemas document the body; the use case judges it, in the contract's order.
      validatorCompiler: () => () => true,
      bodyLimit: deps.services.config.completionBodyLimitBytes,
      onRequest: [judgeContentTypeLater, authenticateFirst],
    },
    (request, reply) => handleCompletion(deps, keyOf(request), request, reply),
  );

  responsesRoutes(app, deps, authenticateFirst, keyOf);
}

/**
 * Whether a client should send the same request again: OpenAI's clients retry 408, 409, 429
 * and 5xx unless told `x-should-retry: false`. A wait past a minute (the month used up), a
 * bad request, and a core failure after plauder's own upstream retries cannot be fixed by
 * retrying at once (docs/contract.md, "OpenAI-compatible door"); the minute's limit, a
 * turn still in flight and a service that is stopping can.
 */
function retryCanHelp(status: number, retryAfter: unknown): boolean {
  if (status < 400) return true;
  if (status === 408 || status === 503) return true;
  if (status === 409 || status === 429) {
    const seconds = Number(retryAfter);
    return Number.isFinite(seconds) && seconds <= 60;
  }
  return false;
}

function modelObject(id: string) {
  return { id, object: 'model', created: MODELS_CREATED, owned_by: 'plauder' };
}

async function handleCompletion(
  deps: V1RouteDeps,
  key: AuthenticatedKey,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const { services } = deps;
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const sessionHeader = request.headers['x-session-id'];
  const parsed = parseCompletionRequest(
    request.headers['content-type'],
    request.body,
    sessionHeader,
    services.config.messageMaxChars,
  );
  const times = { pingMs: deps.pingMs, stallMs: services.config.limits.streamStallTimeoutMs };
  const events = completionEvents(parsed.model, parsed.includeUsage);
  const stream = parsed.stream ? createTurnStream(reply, events, times) : undefined;
  // The session is part of what the request means: another X-Session-Id is another request.
  const endpoint =
    typeof sessionHeader === 'string' ? `${COMPLETIONS_ROUTE} ${sessionHeader}` : COMPLETIONS_ROUTE;
  const decision = await deps.takeTurn({
    key,
    language: parsed.language,
    request: parsed.turn,
    idempotencyKey: request.headers['idempotency-key'],
    fingerprint: { endpoint, body },
    signal: clientSignal(reply),
    handedOver: handedOver(reply),
    onWait: turnWaitHook(request),
    onNotice: (notice) => request.log.warn({ notice }, 'core notice'),
    ...(stream ? { stream: stream.sink } : {}),
  });
  if (stream?.started) return stream.finish(decision, request);
  return render(decision, parsed, request, reply, events, times);
}

function render(
  decision: TurnDecision,
  parsed: CompletionRequest,
  request: FastifyRequest,
  reply: FastifyReply,
  events: StreamDoor,
  times: StreamTimes,
) {
  request.chatOutcome = decision.kind === 'soft_error' ? decision.code : decision.kind;
  switch (decision.kind) {
    case 'reply':
      if (parsed.stream) return replayStream(decision, reply, events, times);
      reply.headers(rateLimitHeaders(decision.quota));
      if (decision.replayed) reply.header('idempotent-replayed', 'true');
      // The turn was not stored: larger than the session's byte bound (docs/sessions.md).
      if (decision.sessionTruncated) reply.header('x-session-truncated', 'true');
      return chatCompletion(
        decision,
        parsed.model,
        decision.reply,
        decision.usage,
        decision.finish,
      );
    case 'soft_error': {
      const { code, detail } = decision;
      reply.headers(rateLimitHeaders(decision.quota));
      if (decision.replayed) reply.header('idempotent-replayed', 'true');
      // A model it does not offer is 404 (as OpenAI's), the other refusals of the body 400.
      const notFound = detail?.code === MODEL_NOT_FOUND;
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

/** Every error under `/v1` in OpenAI's shape, with the headers of the contract. */
function renderError(error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) {
  const apiError = toApiError(error);
  if (apiError.statusCode >= 500) {
    request.log.error(
      { error: safeError(apiError.cause ?? error), code: apiError.code },
      'request failed',
    );
  }
  reply.headers(apiError.headers);
  return sendError(request, reply, apiError.code, apiError.statusOverride);
}

function sendError(request: FastifyRequest, reply: FastifyReply, code: ErrorCode, status?: number) {
  request.errorCode = code;
  const answer = openAiErrorOf(code);
  return reply.code(status ?? answer.status).send(answer.body);
}
