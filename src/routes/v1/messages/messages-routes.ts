/**
 * @module routes/v1/messages/messages-routes
 * Anthropic's Messages door (docs/contract.md, "Anthropic's Messages door"):
 * `POST /v1/messages` and `POST /v1/messages/count_tokens`, for Claude Code, the Claude
 * Agent SDK and the Anthropic SDKs. Same keys, plans, quotas, limits, idempotency, hang-up
 * rules, logs and metrics as `/v1/chat/completions`: a message is a turn of the same use case
 * (src/chat/take-turn.ts), read from Anthropic's body and written in Anthropic's shapes. The
 * key comes as `x-api-key` or `Authorization: Bearer`.
 *
 * Registered inside `/v1` with the prefix `/messages`, as a plugin of its own: every failure
 * here, framework ones and unknown paths included, is answered in Anthropic's error shape
 * (the rest of `/v1` answers in OpenAI's); `x-should-retry` is `/v1`'s hook.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ProblemDetail, TakeTurn } from '../../../chat/take-turn.js';
import { ApiError } from '../../../errors/api-error.js';
import {
  ERROR_MESSAGES,
  type ErrorCode,
  SOFT_ERROR_CODES,
  type SoftErrorCode,
} from '../../../errors/error-codes.js';
import { toApiError } from '../../../errors/error-handler.js';
import { safeError } from '../../../errors/safe-error.js';
import { rateLimitHeaders } from '../../../quota/quota-service.js';
import type { AppDeps, Services } from '../../../services.js';
import {
  type AuthenticatedKey,
  type AuthorizationOf,
  authenticate,
  authenticateBeforeBody,
} from '../../authenticate.js';
import { clientSignal, handedOver, turnWaitHook } from '../../client-signal.js';
import { REFUSAL_CODES, refuse } from '../../refusals.js';
import { judgeContentTypeLater } from '../../request-body.js';
import { RATE_LIMIT_HEADERS, withHeaders } from '../../responses.js';
import { bearerSecurity } from '../../schemas.js';
import { createTurnStream, replayStream } from '../../turn-stream.js';
import { MODEL_NOT_FOUND } from '../completion-answer.js';
import { MODELS } from '../completion-request.js';
import {
  type AnthropicError,
  anthropicError,
  anthropicErrorOf,
  anthropicStatus,
  messageObject,
  messagesEvents,
} from './messages-answer.js';
import { parseMessagesRequest } from './messages-request.js';
import {
  anthropicErrorResponses,
  anthropicErrorSchema,
  anthropicModel,
  countTokensAnswerSchema,
  countTokensRequestSchema,
  messageAnswerSchema,
  messagesHeaders,
  messagesRequestSchema,
} from './messages-schemas.js';

export const MESSAGES_ROUTE = '/v1/messages';

export interface MessagesRouteDeps extends AppDeps {
  readonly takeTurn: TakeTurn;
  readonly pingMs: number;
}

/** As on /v1/chat/completions: refused bodies 400, an inactive plan 403, an unknown model 404. */
const MESSAGE_ERRORS = anthropicErrorResponses(
  [...SOFT_ERROR_CODES, MODEL_NOT_FOUND, 'invalid_api_key', 'payload_too_large', ...REFUSAL_CODES],
  { 403: RATE_LIMIT_HEADERS, 404: RATE_LIMIT_HEADERS },
);

/** The key as Anthropic's clients send it (`x-api-key`), or as a bearer token. */
const anthropicAuthorization: AuthorizationOf = (request) => {
  const key = request.headers['x-api-key'];
  if (typeof key === 'string') return `Bearer ${key}`;
  return request.headers.authorization;
};

/** Whether a request speaks Anthropic's API (`GET /v1/models` answers in its shape then). */
export function speaksAnthropic(request: FastifyRequest): boolean {
  return request.headers['anthropic-version'] !== undefined;
}

/** Registered inside `/v1` with the prefix `/messages`. */
export async function messagesRoutes(app: FastifyInstance, deps: MessagesRouteDeps) {
  const { services } = deps;
  const { hook: authenticateFirst, keyOf } = authenticateBeforeBody(
    services,
    anthropicAuthorization,
  );
  app.addSchema(anthropicErrorSchema);
  app.setErrorHandler(renderError);
  app.setNotFoundHandler((request, reply) => sendError(request, reply, 'not_found'));
  // Anthropic's clients show `request-id` with their errors.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('request-id', request.id);
    done();
  });
  const bodyOptions = {
    // The schemas document the body; the use case judges it, in the contract's order.
    validatorCompiler: () => () => true,
    bodyLimit: services.config.completionBodyLimitBytes,
    onRequest: [judgeContentTypeLater, authenticateFirst],
  };

  app.post(
    '',
    {
      schema: {
        summary: "Message (Anthropic's Messages API), plain or streamed",
        tags: ['anthropic'],
        security: bearerSecurity,
        headers: messagesHeaders,
        body: messagesRequestSchema,
        response: {
          200: withHeaders(messageAnswerSchema, [...RATE_LIMIT_HEADERS, 'Idempotent-Replayed']),
          ...MESSAGE_ERRORS,
        },
      },
      ...bodyOptions,
    },
    (request, reply) => handleMessage(deps, keyOf(request), request, reply),
  );

  app.post(
    '/count_tokens',
    {
      schema: {
        summary: 'Count the input tokens of a message (an estimate, not counted)',
        tags: ['anthropic'],
        security: bearerSecurity,
        headers: messagesHeaders,
        body: countTokensRequestSchema,
        response: {
          200: countTokensAnswerSchema,
          ...anthropicErrorResponses([
            ...SOFT_ERROR_CODES.filter((code) => code !== 'plan_inactive'),
            MODEL_NOT_FOUND,
            'invalid_api_key',
            'payload_too_large',
            'internal_error',
          ]),
        },
      },
      ...bodyOptions,
    },
    (request, reply) => countTokens(services, request, reply),
  );
}

async function handleMessage(
  deps: MessagesRouteDeps,
  key: AuthenticatedKey,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const { services } = deps;
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const sessionHeader = request.headers['x-session-id'];
  const parsed = parseMessagesRequest(
    request.headers['content-type'],
    request.body,
    sessionHeader,
    {
      messageMaxChars: services.config.messageMaxChars,
      requireMaxTokens: true,
    },
  );
  const times = { pingMs: deps.pingMs, stallMs: services.config.limits.streamStallTimeoutMs };
  const events = messagesEvents(parsed.model, parsed.inputTokens);
  const stream = parsed.stream ? createTurnStream(reply, events, times) : undefined;
  // The session is part of what the request means: another X-Session-Id is another request.
  const endpoint =
    typeof sessionHeader === 'string' ? `${MESSAGES_ROUTE} ${sessionHeader}` : MESSAGES_ROUTE;
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
  request.chatOutcome = decision.kind === 'soft_error' ? decision.code : decision.kind;
  switch (decision.kind) {
    case 'reply':
      if (parsed.stream) return replayStream(decision, reply, events, times);
      reply.headers(rateLimitHeaders(decision.quota));
      if (decision.replayed) reply.header('idempotent-replayed', 'true');
      return messageObject(decision, parsed.model, decision.reply, decision.usage, decision.finish);
    case 'soft_error':
      reply.headers(rateLimitHeaders(decision.quota));
      if (decision.replayed) reply.header('idempotent-replayed', 'true');
      return sendRefusedBody(decision, request, reply);
    default:
      return refuse(decision, reply);
  }
}

/** A body the turn refused: 400 naming the field, 403 for an inactive plan, 404 for a model. */
function sendRefusedBody(
  { code, detail }: { readonly code: SoftErrorCode; readonly detail?: ProblemDetail | undefined },
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const own = detail?.code === MODEL_NOT_FOUND ? MODEL_NOT_FOUND : code;
  const { status } = anthropicStatus(own);
  // Named first, as Anthropic's messages do: `max_tokens: Field required`.
  const said = detail?.message ?? ERROR_MESSAGES[code];
  const message = detail?.param == null ? said : `${detail.param}: ${said}`;
  return reply.code(status).send(anthropicError(own, message, request.id));
}

/** `count_tokens`: the door's estimate of the input (src/chat/token-estimate.ts); not counted. */
async function countTokens(services: Services, request: FastifyRequest, reply: FastifyReply) {
  const parsed = parseMessagesRequest(
    request.headers['content-type'],
    request.body,
    request.headers['x-session-id'],
    { messageMaxChars: services.config.messageMaxChars, requireMaxTokens: false },
  );
  if (!parsed.turn.ok) {
    request.errorCode = parsed.turn.code;
    return sendRefusedBody(parsed.turn, request, reply);
  }
  return { input_tokens: parsed.inputTokens };
}

/**
 * `GET /v1/models` and `GET /v1/models/{model}` for a request with `anthropic-version`, in
 * Anthropic's shapes, its failures too. Sent as text: the route's schemas serialise
 * OpenAI's shapes.
 */
export async function anthropicModels(
  services: Services,
  request: FastifyRequest,
  reply: FastifyReply,
  model?: string,
): Promise<FastifyReply> {
  const send = (status: number, body: object) =>
    reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
  try {
    await authenticate(services, request, anthropicAuthorization);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    reply.headers(error.headers);
    request.errorCode = error.code;
    const { status, body } = anthropicErrorOf(error.code, request.id);
    return send(status, body);
  }
  const ids = Object.keys(MODELS);
  if (model === undefined) {
    const data = ids.map(anthropicModel);
    return send(200, { data, has_more: false, first_id: ids[0], last_id: ids.at(-1) });
  }
  if (MODELS[model] !== undefined) return send(200, anthropicModel(model));
  // The path is not echoed: a key pasted into the wrong place would land in the answer.
  request.errorCode = 'not_found';
  const message = `No such model. Use one of: ${ids.join(', ')}.`;
  return send(404, anthropicError(MODEL_NOT_FOUND, message, request.id));
}

/** Every error of the door in Anthropic's shape, with the headers of the contract. */
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
  const answer = anthropicErrorOf(code, request.id);
  return reply.code(status ?? answer.status).send(answer.body satisfies AnthropicError);
}
