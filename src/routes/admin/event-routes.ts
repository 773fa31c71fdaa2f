/**
 * @module routes/admin/event-routes
 * `GET /admin/v1/events`: the receiver, how many events wait, were delivered or failed,
 * and the latest events with their delivery state (docs/contract.md, "Events").
 */
import type { FastifyInstance } from 'fastify';
import { redactUrl } from '../../config/config.js';
import type { EventStatus } from '../../events/events.js';
import type { AppDeps } from '../../services.js';
import { errorResponses } from '../responses.js';
import { adminSecurity, eventListQuery, eventListSchema } from './admin-schemas.js';

const DEFAULT_LIMIT = 50;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export async function adminEventRoutes(app: FastifyInstance, { services }: AppDeps): Promise<void> {
  app.get<{ Querystring: { status?: EventStatus; limit?: number } }>(
    '/admin/v1/events',
    {
      schema: {
        summary: 'Events (webhooks): the receiver, counts by status and the latest events',
        tags: ['admin events'],
        security: adminSecurity,
        querystring: eventListQuery,
        response: {
          200: eventListSchema,
          ...errorResponses(['fields_invalid', 'admin_unauthorized']),
        },
      },
    },
    async (request) => {
      const webhook = services.config.webhook;
      const { status, limit = DEFAULT_LIMIT } = request.query;
      const [counts, events, disabled] = await Promise.all([
        services.events.counts(),
        services.events.list({ ...(status === undefined ? {} : { status }), limit }),
        webhook ? services.events.receiverState(webhook.url) : undefined,
      ]);
      return {
        receiver:
          webhook === undefined
            ? null
            : {
                url: redactUrl(webhook.url),
                disabled: disabled !== undefined,
                disabledAt: iso(disabled?.disabledAt ?? null),
                disabledReason: disabled?.reason ?? null,
              },
        counts,
        events: events.map((event) => ({
          id: event.id,
          type: event.type,
          status: event.status,
          attempts: event.attempts,
          createdAt: iso(event.createdAt),
          nextAttemptAt: event.status === 'pending' ? iso(event.nextAttemptAt) : null,
          lastAttemptAt: iso(event.lastAttemptAt),
          lastStatus: event.lastStatus,
          lastError: event.lastError,
          deliveredAt: iso(event.deliveredAt),
          data: (JSON.parse(event.payload) as { data: Record<string, unknown> }).data,
        })),
      };
    },
  );
}
