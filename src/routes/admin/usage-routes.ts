/**
 * @module routes/admin/usage-routes
 * Usage for operators: requests per key in a month (`plauder usage`), and one key's last
 * twelve months and the days of the current one, for the console's charts.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import type { ListQuery } from '../../operations/list-query.js';
import { keyUsageHistory, monthUsageReport } from '../../operations/usage-operations.js';
import type { AppDeps } from '../../services.js';
import { errorResponses } from '../responses.js';
import {
  adminSecurity,
  keyHistorySchema,
  keyIdParams,
  monthListQuery,
  monthUsageReportSchema,
} from './admin-schemas.js';
import { knownQuery, LIST_REFUSED } from './json-body.js';

const tags = ['admin usage'];

export async function adminUsageRoutes(app: FastifyInstance, { services }: AppDeps): Promise<void> {
  app.get<{ Querystring: ListQuery & { month?: string } }>(
    '/admin/v1/usage',
    {
      schema: {
        summary: 'Requests per key in a month, and their total',
        description:
          'One page of the keys that existed in the month (or were counted in it), with the paging, search and filters of `GET /admin/v1/keys`; `total` is the requests of all matching keys.',
        tags,
        security: adminSecurity,
        querystring: monthListQuery,
        response: {
          200: monthUsageReportSchema,
          ...errorResponses(['month_invalid', ...LIST_REFUSED, 'admin_unauthorized']),
        },
      },
      preValidation: knownQuery(),
    },
    async (request) => {
      const { month, ...query } = request.query;
      const report = await monthUsageReport(services, month, query);
      if (!report.ok) throw new ApiError('cursor_invalid');
      return report.value;
    },
  );

  app.get<{ Params: { id: string } }>(
    '/admin/v1/keys/:id/usage',
    {
      schema: {
        summary: "A key's requests in each of the last 12 months and each day of this month",
        tags,
        security: adminSecurity,
        params: keyIdParams,
        response: {
          200: keyHistorySchema,
          ...errorResponses(['admin_unauthorized', 'key_not_found']),
        },
      },
    },
    async (request) => {
      const history = await keyUsageHistory(services, request.params.id);
      if (!history.ok) throw new ApiError('key_not_found');
      return history.value;
    },
  );
}
