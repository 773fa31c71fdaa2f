/**
 * @module routes/ops/metrics
 * Prometheus metrics. Labels are bounded: route patterns (never raw URLs), status codes,
 * outcome codes from the closed list. Key ids are deliberately not a label.
 *
 * A request's counts are kept per label set in plain numbers and handed to prom-client when
 * `/metrics` is read (its `collect` hook), and its duration is observed with a labels object
 * made once per route, because prom-client hashes the labels object of every call.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { TokenUsage, UpstreamHealth } from '../../core/core-adapter.js';

export interface Metrics {
  readonly registry: Registry;
  /** Counts the requests of each route pattern, their durations and turns' outcomes. */
  readonly requests: RequestMetrics;
  /** How long turns waited for their key's place and a core slot (those that waited). */
  readonly turnWait: Histogram;
  /** Turns waiting for a place now. */
  readonly turnsWaiting: Gauge;
  /** Webhook delivery attempts by how they ended (delivered, retry, gave_up, gone). */
  readonly webhookAttempts: Counter<'result'>;
  /** The upstream attempts of an LLM core, in the names of the GenAI conventions. */
  readonly genAi: GenAiMetrics;
  /** Tokens charged to token budgets, by plan (never by key). */
  readonly tokens: Counter<'plan'>;
}

/**
 * The OpenTelemetry GenAI metrics in Prometheus' spelling (`gen_ai.client.token.usage` is
 * `gen_ai_client_token_usage`), so dashboards made for them work (docs/observability.md).
 * Labels: the configured model, the token type, the error type; never a key or a session.
 */
export interface GenAiMetrics {
  tokenUsage(model: string, usage: TokenUsage): void;
  timeToFirstToken(model: string, seconds: number): void;
  /** One attempt's duration; `errorType` when it failed (`timeout`, `500`, ...). */
  requestDuration(model: string, seconds: number, errorType: string | undefined): void;
}

interface RequestMetrics {
  /** One request of `route` (a pattern), answered with `status` after `seconds`. */
  answered(route: string, method: string, status: number, seconds: number): void;
  /** The outcome of a turn answered at the chat endpoint `route`. */
  turn(route: string, outcome: string): void;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'plauder_' });
  const routes = new Map<string, RouteCounts>();
  const routeCounts = (route: string): RouteCounts => {
    let counts = routes.get(route);
    if (counts === undefined) {
      counts = { labels: { route }, requests: new Map(), outcomes: new Map() };
      routes.set(route, counts);
    }
    return counts;
  };

  new Counter({
    name: 'plauder_http_requests_total',
    help: 'HTTP requests by route pattern, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
    collect() {
      for (const counts of routes.values()) flush(counts.requests, this);
    },
  });
  const duration = new Histogram({
    name: 'plauder_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern',
    labelNames: ['route'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  new Counter({
    name: 'plauder_chat_outcomes_total',
    help: 'Chat responses by endpoint and outcome (reply, soft error or error code)',
    labelNames: ['endpoint', 'outcome'],
    registers: [registry],
    collect() {
      for (const counts of routes.values()) flush(counts.outcomes, this);
    },
  });

  return {
    registry,
    requests: {
      answered(route, method, status, seconds) {
        const counts = routeCounts(route);
        const id = `${method} ${status}`;
        const pending = counts.requests.get(id);
        if (pending === undefined) counts.requests.set(id, pendingOne({ route, method, status }));
        else pending.count++;
        duration.observe(counts.labels, seconds);
      },
      turn(route, outcome) {
        const { outcomes } = routeCounts(route);
        const pending = outcomes.get(outcome);
        if (pending === undefined) outcomes.set(outcome, pendingOne({ endpoint: route, outcome }));
        else pending.count++;
      },
    },
    turnWait: new Histogram({
      name: 'plauder_turn_wait_seconds',
      help: "How long turns that found no free place waited for their key's place and a core slot (docs/quota-and-limits.md)",
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    turnsWaiting: new Gauge({
      name: 'plauder_turns_waiting',
      help: "Turns waiting for their key's place or a core slot now",
      registers: [registry],
    }),
    genAi: genAiMetrics(registry),
    webhookAttempts: new Counter({
      name: 'plauder_webhook_attempts_total',
      help: 'Webhook delivery attempts of this instance by result: delivered, retry, gave_up (retries ran out), gone (410)',
      labelNames: ['result'],
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'plauder_tokens_total',
      help: 'Tokens charged to the token budgets of plans that have them, input and output together, by plan (docs/quota-and-limits.md)',
      labelNames: ['plan'],
      registers: [registry],
    }),
  };
}

function genAiMetrics(registry: Registry): GenAiMetrics {
  const tokens = new Histogram({
    name: 'gen_ai_client_token_usage',
    help: 'Tokens per upstream answer by type (input, output) and requested model',
    labelNames: ['gen_ai_operation_name', 'gen_ai_request_model', 'gen_ai_token_type'],
    // The GenAI conventions' advised buckets.
    buckets: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304],
    registers: [registry],
  });
  const firstToken = new Histogram({
    name: 'gen_ai_server_time_to_first_token_seconds',
    help: "Seconds from a streamed attempt's start to its first token, by requested model",
    labelNames: ['gen_ai_operation_name', 'gen_ai_request_model'],
    buckets: [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'gen_ai_server_request_duration_seconds',
    help: 'Seconds per upstream attempt, by requested model and error type (empty: success)',
    labelNames: ['gen_ai_operation_name', 'gen_ai_request_model', 'error_type'],
    buckets: [
      0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
    ],
    registers: [registry],
  });
  const chat = 'chat';
  return {
    tokenUsage(model, usage) {
      const labels = { gen_ai_operation_name: chat, gen_ai_request_model: model };
      tokens.observe({ ...labels, gen_ai_token_type: 'input' }, usage.promptTokens);
      tokens.observe({ ...labels, gen_ai_token_type: 'output' }, usage.completionTokens);
    },
    timeToFirstToken(model, seconds) {
      firstToken.observe({ gen_ai_operation_name: chat, gen_ai_request_model: model }, seconds);
    },
    requestDuration(model, seconds, errorType) {
      const labels = {
        gen_ai_operation_name: chat,
        gen_ai_request_model: model,
        error_type: errorType ?? '',
      };
      duration.observe(labels, seconds);
    },
  };
}

/** How a breaker's state is shown: 0 closed, 1 half open (a probe may go), 2 open. */
const BREAKER_VALUES = { closed: 0, half_open: 1, open: 2 } as const;

/**
 * `plauder_upstream_breaker_state{upstream="0"}` per upstream of the core, by position in
 * the configured list (never its URL, which may carry credentials in its query).
 */
export function watchUpstreams(metrics: Metrics, upstreams: () => readonly UpstreamHealth[]): void {
  new Gauge({
    name: 'plauder_upstream_breaker_state',
    help: "Each upstream's circuit breaker by position: 0 closed, 1 half open (one probe may go), 2 open",
    labelNames: ['upstream'],
    registers: [metrics.registry],
    collect() {
      for (const { upstream, state } of upstreams()) {
        this.set({ upstream: String(upstream) }, BREAKER_VALUES[state]);
      }
    },
  });
}

type Labels = Record<string, string | number>;

/** A label set's count since `/metrics` was last read. */
interface Pending {
  readonly labels: Labels;
  count: number;
}

interface RouteCounts {
  /** The duration histogram's labels of this route, made once. */
  readonly labels: { readonly route: string };
  /** By method and status. */
  readonly requests: Map<string, Pending>;
  /** By outcome (chat endpoints only). */
  readonly outcomes: Map<string, Pending>;
}

function pendingOne(labels: Labels): Pending {
  return { labels, count: 1 };
}

function flush(pending: Map<string, Pending>, counter: Counter<string>): void {
  for (const entry of pending.values()) {
    if (entry.count === 0) continue;
    counter.inc(entry.labels, entry.count);
    entry.count = 0;
  }
}
