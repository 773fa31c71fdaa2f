/**
 * @module routes/api/chat/chat-routes
 * `POST /api/chat` (German) and `POST /api/chat-en` (English): the contract's decision
 * table in order. The body is read as raw bytes and judged only after authentication
 * and the quota, because a bad key must get 401 whatever the body.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Language } from '../../../core/core-adapter.js';
import { ApiError } from '../../../errors/api-error.js';
import { ERROR_MESSAGES, type SoftErrorCode } from '../../../errors/error-codes.js';
import { type QuotaState, rateLimitHeaders } from '../../../quota/quota-service.js';
import type { AppDeps } from '../../../services.js';
import { bearerSecurity, chatRequestSchema, chatResponseSchema, errorRef } from '../../schemas.js';
import { type AuthenticatedKey, authenticate } from '../authenticate.js';
import { isJsonContentType, parseChatRequest } from './chat-request.js';
import { runCore } from './run-core.js';
import { SOFT_REPLIES } from './soft-replies.js';

const ENDPOINTS: ReadonlyArray<{ url: string; language: Language; summary: string }> = [
  { url: '/api/chat', language: 'de', summary: 'Chat in German' },
  { url: '/api/chat-en', language: 'en', summary: 'Chat in English' },
];

export async function chatRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  for (const endpoint of ENDPOINTS) {
    app.post(
      endpoint.url,
      {
        schema: {
          summary: endpoint.summary,
          tags: ['chat'],
          security: bearerSecurity,
          body: chatRequestSchema,
          response: {
            200: chatResponseSchema,
            401: errorRef,
            429: errorRef,
            413: errorRef,
            500: errorRef,
          },
        },
        // The schema documents the body; the handler validates it, in the contract's order.
        validatorCompiler: () => () => true,
        onRequest: judgeContentTypeLater,
      },
      (request, reply) => handleChat(deps, endpoint.language, request, reply),
    );
  }
}

/**
 * Fastify answers a malformed Content-Type (`""`, `json`, `a, b`) with 415 before the
 * handler runs, which would skip row 1 (a bad key gets 401 whatever the body) and row 4
 * (a wrong content type is the soft error `body_invalid`). The handler only asks "JSON or
 * not?", so the header is reduced to that answer, which Fastify always accepts.
 */
async function judgeContentTypeLater(request: FastifyRequest): Promise<void> {
  const contentType = request.headers['content-type'];
  if (contentType === undefined) return;
  request.headers['content-type'] = isJsonContentType(contentType)
    ? 'application/json'
    : 'application/octet-stream';
}

async function handleChat(
  deps: AppDeps,
  language: Language,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const { services } = deps;
  const key = await authenticate(services, request);
  const now = services.clock();

  if (!key.active) {
    const state = await services.quota.current(key.id, key.limit, now);
    return softError(reply, state, 'plan_inactive', language);
  }

  const parsed = parseChatRequest(
    request.headers['content-type'],
    request.body,
    services.config.messageMaxChars,
  );
  if (!parsed.ok) {
    const state = await services.quota.current(key.id, key.limit, now);
    if (state.used >= state.limit) throw quotaExceeded(state);
    return softError(reply, state, parsed.code, language);
  }

  const reservation = await services.quota.reserve(key.id, key.limit, now);
  if (!reservation.ok) throw quotaExceeded(reservation.state);

  try {
    const text = await converse(deps, key, language, parsed.message, parsed.sessionId);
    reply.headers(rateLimitHeaders(reservation.state));
    request.chatOutcome = 'reply';
    return { reply: text };
  } catch (error) {
    await reservation.refund();
    throw error;
  }
}

async function converse(
  deps: AppDeps,
  key: AuthenticatedKey,
  language: Language,
  message: string,
  sessionId: string | undefined,
): Promise<string> {
  const { sessions, clock, config } = deps.services;
  const session =
    sessionId === undefined ? undefined : await sessions.open(key.id, sessionId, clock());
  const history = session?.history ?? [];
  const text = await runCore(deps.core, { language, message, history }, config.coreTimeoutMs);
  await session?.record({ message, reply: text, language }, clock());
  return text;
}

function softError(
  reply: FastifyReply,
  state: QuotaState,
  code: SoftErrorCode,
  language: Language,
) {
  reply.headers(rateLimitHeaders(state));
  reply.request.chatOutcome = code;
  return { reply: SOFT_REPLIES[code][language], error: { code, message: ERROR_MESSAGES[code] } };
}

function quotaExceeded(state: QuotaState): ApiError {
  const headers = rateLimitHeaders(state);
  const retryAfter = String(Math.max(1, Math.ceil((state.window.endMs - state.nowMs) / 1000)));
  return new ApiError('quota_exceeded', { ...headers, 'retry-after': retryAfter });
}

declare module 'fastify' {
  interface FastifyRequest {
    /** `reply` or the soft error code, for metrics. */
    chatOutcome?: string;
  }
}
