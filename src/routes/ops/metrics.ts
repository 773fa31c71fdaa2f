/**
 * @module routes/ops/metrics
 * Prometheus metrics. Labels are bounded: route patterns (never raw URLs), status codes,
 * outcome codes from the closed list. Key ids are deliberately not a label.
 */
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

export interface Metrics {
  readonly registry: Registry;
  readonly requests: Counter<'route' | 'method' | 'status'>;
  readonly duration: Histogram<'route'>;
  readonly chatOutcomes: Counter<'endpoint' | 'outcome'>;
  /** Webhook delivery attempts by how they ended (delivered, retry, gave_up, gone). */
  readonly webhookAttempts: Counter<'result'>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'plauder_' });
  return {
    registry,
    requests: new Counter({
      name: 'plauder_http_requests_total',
      help: 'HTTP requests by route pattern, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'plauder_http_request_duration_seconds',
      help: 'HTTP request duration by route pattern',
      labelNames: ['route'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    chatOutcomes: new Counter({
      name: 'plauder_chat_outcomes_total',
      help: 'Chat responses by endpoint and outcome (reply, soft error or error code)',
      labelNames: ['endpoint', 'outcome'],
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: 'plauder_webhook_attempts_total',
      help: 'Webhook delivery attempts of this instance by result: delivered, retry, gave_up (retries ran out), gone (410)',
      labelNames: ['result'],
      registers: [registry],
    }),
  };
}
