/**
 * @module routes/ops/ops-routes
 * Liveness, readiness, metrics and the OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import { ApiError } from '../../errors/api-error.js';
import { safeError } from '../../errors/safe-error.js';
import type { AppDeps } from '../../services.js';
import { errorRef } from '../schemas.js';
import type { Metrics } from './metrics.js';

const statusSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string' } },
} as const;

/** A load balancer's probe gives up after a second or two; answer before it does. */
const READY_TIMEOUT_MS = 2000;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function opsRoutes(
  app: FastifyInstance,
  deps: AppDeps & { metrics: Metrics },
): Promise<void> {
  app.get(
    '/healthz',
    { schema: { summary: 'Liveness', tags: ['ops'], response: { 200: statusSchema } } },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: the database answers',
        tags: ['ops'],
        response: { 200: statusSchema, 503: errorRef },
      },
    },
    async (request) => {
      try {
        await withTimeout(deps.services.store.ping(), READY_TIMEOUT_MS);
      } catch (error) {
        request.log.warn({ error: safeError(error) }, 'database not reachable');
        throw new ApiError('service_unavailable');
      }
      return { status: 'ready' };
    },
  );

  const { quota } = deps.services;
  new Gauge({
    name: 'plauder_quota_refunds_pending',
    help: 'Refunds waiting for the database to answer (retried in the background)',
    registers: [deps.metrics.registry],
    collect() {
      this.set(quota.pendingRefunds());
    },
  });

  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics',
        tags: ['ops'],
        response: { 200: { type: 'string', description: 'Prometheus text format' } },
      },
    },
    async (_request, reply) => {
      reply.type(deps.metrics.registry.contentType);
      return deps.metrics.registry.metrics();
    },
  );

  app.get(
    '/openapi.json',
    {
      schema: {
        summary: 'This OpenAPI 3.1 document',
        tags: ['ops'],
        response: { 200: { type: 'object', additionalProperties: true } },
      },
    },
    async () => app.swagger(),
  );
}
