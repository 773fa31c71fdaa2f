/**
 * @module routes/admin/plan-routes
 * The configured plans (`PLAUDER_PLANS`), for forms that offer them.
 */
import type { FastifyInstance } from 'fastify';
import { listPlans } from '../../operations/plan-operations.js';
import type { AppDeps } from '../../services.js';
import { errorResponses } from '../responses.js';
import { adminSecurity, planListSchema } from './admin-schemas.js';

export async function adminPlanRoutes(app: FastifyInstance, { services }: AppDeps): Promise<void> {
  const plans = listPlans(services.config.plans);
  app.get(
    '/admin/v1/plans',
    {
      schema: {
        summary: 'The configured plans and their limits per month and per minute',
        tags: ['admin plans'],
        security: adminSecurity,
        response: { 200: planListSchema, ...errorResponses(['admin_unauthorized']) },
      },
    },
    async () => ({ plans }),
  );
}
