/**
 * @module routes/api/session-routes
 * `GET` / `DELETE /api/sessions/{sessionId}`: a key holder reads or erases the memory of
 * one of its own conversations. Neither counts against the quota.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { AppDeps } from '../../services.js';
import { SESSION_ID_PATTERN } from '../../sessions/session-service.js';
import { authenticate } from '../authenticate.js';
import { errorResponses } from '../responses.js';
import { bearerSecurity, sessionIdParams, sessionSchema } from '../schemas.js';

interface SessionParams {
  sessionId: string;
}

const SESSION_ERRORS = errorResponses(['invalid_api_key', 'session_not_found']);

export async function sessionRoutes(app: FastifyInstance, { services }: AppDeps): Promise<void> {
  app.get<{ Params: SessionParams }>(
    '/api/sessions/:sessionId',
    {
      schema: {
        summary: 'Read the stored turns of a session',
        tags: ['sessions'],
        security: bearerSecurity,
        params: sessionIdParams,
        response: { 200: sessionSchema, ...SESSION_ERRORS },
      },
      // An id that does not match the documented pattern is no stored session: 404, not 400.
      attachValidation: true,
    },
    async (request) => {
      const key = await authenticate(services, request);
      const { sessionId } = request.params;
      const turns = SESSION_ID_PATTERN.test(sessionId)
        ? await services.sessions.read(key.id, sessionId, services.clock())
        : undefined;
      if (!turns) throw new ApiError('session_not_found');
      return { sessionId, turns };
    },
  );

  app.delete<{ Params: SessionParams }>(
    '/api/sessions/:sessionId',
    {
      schema: {
        summary: 'Delete a session and its turns for good',
        tags: ['sessions'],
        security: bearerSecurity,
        params: sessionIdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...SESSION_ERRORS },
      },
      attachValidation: true,
    },
    async (request, reply) => {
      const key = await authenticate(services, request);
      const { sessionId } = request.params;
      const deleted =
        SESSION_ID_PATTERN.test(sessionId) &&
        (await services.sessions.delete(key.id, sessionId, services.clock()));
      if (!deleted) throw new ApiError('session_not_found');
      return reply.code(204).send();
    },
  );
}
