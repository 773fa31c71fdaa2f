/**
 * @module routes/admin/usage-routes
 * Usage for operators: requests per key in a month (`plauder usage`), and one key's last
 * twelve months for the console's chart.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { keyStatus, keysWithUsage } from '../../keys/key-service.js';
import type { AppDeps } from '../../services.js';
import { errorRef } from '../schemas.js';
import {
  adminSecurity,
  keyHistorySchema,
  keyIdParams,
  monthQuery,
  monthUsageReportSchema,
} from './admin-schemas.js';

const HISTORY_MONTHS = 12;
const tags = ['admin usage'];

export async function adminUsageRoutes(app: FastifyInstance, { services }: AppDeps): Promise<void> {
  const { plans, quotaTimeZone } = services.config;

  app.get<{ Querystring: { month?: string } }>(
    '/admin/v1/usage',
    {
      schema: {
        summary: 'Requests per key in a month, and their total',
        tags,
        security: adminSecurity,
        querystring: monthQuery,
        response: { 200: monthUsageReportSchema, 400: errorRef, 401: errorRef },
      },
    },
    async (request) => {
      const month = request.query.month ?? services.quota.monthOf(services.clock()).month;
      const rows = (await keysWithUsage(services.keys, services.usage, month)).map(
        ({ key, used }) => ({
          id: key.id,
          name: key.name,
          plan: key.plan,
          status: keyStatus(key),
          used,
          limit: plans.get(key.plan) ?? null,
        }),
      );
      const total = rows.reduce((sum, row) => sum + row.used, 0);
      return { month, timeZone: quotaTimeZone, total, keys: rows };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/admin/v1/keys/:id/usage',
    {
      schema: {
        summary: "A key's requests in each of the last 12 months",
        tags,
        security: adminSecurity,
        params: keyIdParams,
        response: { 200: keyHistorySchema, 401: errorRef, 404: errorRef },
      },
    },
    async (request) => {
      const key = await services.keys.get(request.params.id);
      if (!key) throw new ApiError('key_not_found');
      const months = await services.quota.history(key.id, services.clock(), HISTORY_MONTHS);
      return { id: key.id, limit: plans.get(key.plan) ?? null, months };
    },
  );
}
