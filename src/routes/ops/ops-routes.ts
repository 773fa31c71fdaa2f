/**
 * @module routes/ops/ops-routes
 * Liveness, readiness, metrics and the OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import { Gauge } from 'prom-client';
import { type CoreSettings, coreSettingsProblem } from '../../core/core-settings.js';
import { errorBody } from '../../errors/api-error.js';
import { safeError } from '../../errors/safe-error.js';
import type { AppDeps } from '../../services.js';
import { errorBodySchema } from '../schemas.js';
import type { Metrics } from './metrics.js';

const statusSchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string' } },
} as const;

/** Each upstream's circuit breaker, by position (docs/core.md, "Several upstreams"). */
const upstreamsSchema = {
  type: 'array',
  description:
    "The core's upstreams by position in PLAUDER_OPENAI_BASE_URL and their circuit breakers (only with several-upstream cores). An open breaker does not make the instance unready: every instance shares the upstreams.",
  items: {
    type: 'object',
    required: ['upstream', 'state', 'retryInSeconds'],
    properties: {
      upstream: { type: 'integer' },
      state: { type: 'string', enum: ['closed', 'open', 'half_open'] },
      retryInSeconds: { type: 'integer' },
    },
  },
} as const;

const readySchema = {
  type: 'object',
  required: ['status'],
  properties: { status: { type: 'string' }, upstreams: upstreamsSchema },
} as const;

const notReadySchema = {
  type: 'object',
  required: ['error', 'reason'],
  properties: {
    error: errorBodySchema.properties.error,
    reason: { type: 'string', description: 'Why the instance is not ready' },
    upstreams: upstreamsSchema,
  },
} as const;

/** A load balancer's probe gives up after a second or two; answer before it does. */
const READY_TIMEOUT_MS = 2000;

/**
 * `work`, or a rejection once `signal` aborts. `AbortSignal.timeout` fits here: a probe a
 * second keeps at most a few timers alive; a chat request's core deadline, one per request
 * at any rate and up to PLAUDER_CORE_TIMEOUT long, is a timer cleared when the turn ends.
 */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return Promise.race([
    work,
    new Promise<never>((_, reject) =>
      signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
    ),
  ]);
}

/** Why this instance should not get traffic, or undefined when it is ready. */
async function notReadyReason(deps: OpsDeps, signal: AbortSignal): Promise<string | undefined> {
  const core = coreSettingsProblem(deps.coreSettings);
  if (core !== undefined) return core;
  const { store } = deps.services;
  return untilAborted(
    store.ping().then(() => store.schemaProblem()),
    signal,
  );
}

type OpsDeps = AppDeps & { metrics: Metrics; coreSettings: CoreSettings };

export async function opsRoutes(app: FastifyInstance, deps: OpsDeps): Promise<void> {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness',
        tags: ['ops'],
        response: { 200: { ...statusSchema, examples: [{ status: 'ok' }] } },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        summary:
          'Readiness: the database answers with the schema this build expects, and the core is configured',
        description:
          'The core is not asked to answer: an upstream hiccup must not take every instance out of the load balancer at once.',
        tags: ['ops'],
        response: {
          200: { ...readySchema, examples: [{ status: 'ready' }] },
          503: notReadySchema,
        },
      },
    },
    async (request, reply) => {
      let reason: string | undefined;
      try {
        reason = await notReadyReason(deps, AbortSignal.timeout(READY_TIMEOUT_MS));
      } catch (error) {
        request.log.warn({ error: safeError(error) }, 'database not reachable');
        reason = 'the database does not answer';
      }
      const upstreams = deps.core.upstreams?.();
      const detail = upstreams === undefined ? {} : { upstreams };
      if (reason === undefined) return { status: 'ready', ...detail };
      if (!reason.startsWith('the database does not')) request.log.warn({ reason }, 'not ready');
      request.errorCode = 'service_unavailable';
      return reply
        .code(503)
        .send({ ...errorBody('service_unavailable', request.id), reason, ...detail });
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

  const { events, config } = deps.services;
  if (config.webhook !== undefined) {
    const url = config.webhook.url;
    new Gauge({
      name: 'plauder_webhook_events',
      help: 'Events in the outbox by status: pending (to be sent), delivered, failed (retries ran out)',
      labelNames: ['status'],
      registers: [deps.metrics.registry],
      async collect() {
        for (const [status, count] of Object.entries(await events.counts())) {
          this.set({ status }, count);
        }
      },
    });
    new Gauge({
      name: 'plauder_webhook_receiver_disabled',
      help: '1 when the receiver answered 410 Gone and nothing is sent until it is enabled again',
      registers: [deps.metrics.registry],
      async collect() {
        this.set((await events.receiverState(url)) ? 1 : 0);
      },
    });
  }

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
