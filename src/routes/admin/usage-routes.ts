/**
 * @module routes/admin/usage-routes
 * Usage for operators: requests per key in a month (`plauder usage`), and one key's last
 * twelve months for the console's chart.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { usageUnderPlan } from '../../operations/plan-operations.js';
import { monthUsageReport } from '../../operations/usage-operations.js';
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

/**
 * How far the current quota month has come, in the quota time zone: today is day
 * `day` of `days`. Usage is counted per month only, so this is what a daily average needs.
 */
export function daysOfMonth(nowMs: number, timeZone: string): { day: number; days: number } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
  }).formatToParts(nowMs);
  const part = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const year = part('year');
  const month = part('month');
  return { day: part('day'), days: new Date(Date.UTC(year, month, 0)).getUTCDate() };
}
const tags = ['admin usage'];

export async function adminUsageRoutes(app: FastifyInstance, { services }: AppDeps): Promise<void> {
  const { plans } = services.config;

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
    async (request) => monthUsageReport(services, request.query.month),
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
      const now = services.clock();
      const months = await services.quota.history(key.id, now, HISTORY_MONTHS);
      return {
        id: key.id,
        limit: usageUnderPlan(plans, key.plan, 0, 0).limit,
        months,
        currentMonth: daysOfMonth(now, services.config.quotaTimeZone),
      };
    },
  );
}
