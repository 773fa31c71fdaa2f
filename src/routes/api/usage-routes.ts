/**
 * @module routes/api/usage-routes
 * `GET /api/usage`: the key holder's plan and this month's count. Not counted.
 */
import type { FastifyInstance } from 'fastify';
import { keyUsage } from '../../quota/key-usage.js';
import { rateLimitHeaders } from '../../quota/quota-service.js';
import type { AppDeps } from '../../services.js';
import { authenticate } from '../authenticate.js';
import { errorResponses, RATE_LIMIT_HEADERS, withHeaders } from '../responses.js';
import { bearerSecurity, usageSchema } from '../schemas.js';

export async function usageRoutes(app: FastifyInstance, { services }: AppDeps): Promise<void> {
  app.get(
    '/api/usage',
    {
      schema: {
        summary: "This month's usage of the calling key",
        tags: ['usage'],
        security: bearerSecurity,
        response: {
          200: withHeaders(usageSchema, RATE_LIMIT_HEADERS),
          ...errorResponses(['invalid_api_key']),
        },
      },
    },
    async (request, reply) => {
      const key = await authenticate(services, request);
      const state = await services.quota.current(key, services.clock());
      reply.headers(rateLimitHeaders(state));
      return keyUsage(key, state);
    },
  );
}
