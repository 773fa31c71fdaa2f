/**
 * @module app
 * `buildApp(config, deps)` assembles the whole service as a Fastify instance and never
 * listens: `server.ts` does that, tests and benchmarks listen on a loopback port.
 */
import { randomUUID } from 'node:crypto';
import swagger, { type SwaggerTransformObject } from '@fastify/swagger';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { createStopping, type Stopping } from './chat/run-core.js';
import { createTakeTurn } from './chat/take-turn.js';
import type { Config } from './config/config.js';
import { type ConnectionGuard, guardConnections } from './connection-guard.js';
import { errorBody } from './errors/api-error.js';
import { statusOf } from './errors/error-codes.js';
import { clientErrorHandler, installErrorHandlers } from './errors/error-handler.js';
import { startWebhookSender } from './events/webhook-sender.js';
import { KEY_PREFIX } from './keys/key-format.js';
import { startTokenSweeper } from './quota/token-sweeper.js';
import { adminRoutes } from './routes/admin/admin-routes.js';
import { chatRoutes } from './routes/api/chat/chat-routes.js';
import { sessionRoutes } from './routes/api/session-routes.js';
import { usageRoutes } from './routes/api/usage-routes.js';
import { DEFAULT_PING_MS } from './routes/event-stream.js';
import { MCP_ROUTE, mcpRoutes } from './routes/mcp/mcp-routes.js';
import { docsRoutes } from './routes/ops/docs-routes.js';
import { createMetrics, type Metrics, watchUpstreams } from './routes/ops/metrics.js';
import { opsRoutes } from './routes/ops/ops-routes.js';
import { rootRoute } from './routes/ops/root-route.js';
import { completeResponses } from './routes/responses.js';
import { errorBodySchema } from './routes/schemas.js';
import { MESSAGES_ROUTE } from './routes/v1/messages/messages-routes.js';
import { RESPONSES_ROUTE } from './routes/v1/responses/responses-routes.js';
import { COMPLETIONS_ROUTE, v1Routes } from './routes/v1/v1-routes.js';
import type { AppDeps } from './services.js';
import { startSessionSweeper } from './sessions/session-sweeper.js';
import { startTracing, traceRequests } from './tracing/tracing.js';
import { upstreamTelemetry } from './tracing/upstream-telemetry.js';
import { VERSION } from './version.js';

export interface BuildAppOptions {
  /** Where JSON logs go (default stdout); tests capture them here. */
  readonly logStream?: NodeJS.WritableStream;
  /** Run the retention sweep on a timer (the server does; the CLI does not). */
  readonly sweepSessions?: boolean;
  /**
   * How long `close()` lets turns wait for the core before cancelling them (refunded,
   * answered 500): shorter than the process's own shutdown deadline, so that no turn is
   * counted without its reply being delivered. Default 20 s.
   */
  readonly turnDrainMs?: number;
  /**
   * How long a streamed reply may stay silent before a `: ping` comment is sent. Default
   * 15 s (docs/contract.md, "Streamed replies"); tests pass less.
   */
  readonly streamPingMs?: number;
}

const TURN_DRAIN_MS = 20_000;

const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export async function buildApp(
  config: Config,
  deps: AppDeps,
  options: BuildAppOptions = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    logger: loggerOptions(config, options),
    // Nothing from the request is logged automatically; `onResponse` writes one safe line.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    // A slow client gets 408 (errors/error-handler.ts) instead of holding its connection.
    requestTimeout: config.limits.requestTimeoutMs,
    keepAliveTimeout: config.limits.keepAliveTimeoutMs,
    http: {
      headersTimeout: config.limits.headersTimeoutMs,
      // Node looks for expired requests this often (30 s by default, which would stretch a
      // 10 s headers timeout to 40 s).
      connectionsCheckingInterval: Math.min(1000, Math.ceil(config.limits.headersTimeoutMs / 4)),
    },
    // Session ids are up to 128 characters (more once percent-encoded).
    routerOptions: { maxParamLength: 256 },
    // The router's own refusals (bad percent-encoding, overlong parameters) use our envelope too.
    frameworkErrors: (error, request, rawReply) => {
      const reply = rawReply as FastifyReply;
      const code = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'not_found' : 'bad_request';
      request.errorCode = code;
      reply.header('cache-control', 'no-store').header('x-request-id', request.id);
      return reply.code(statusOf(code)).send(errorBody(code, request.id));
    },
    clientErrorHandler,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      // The request id is logged: one that carries an API key is not taken over.
      return typeof incoming === 'string' &&
        INCOMING_REQUEST_ID.test(incoming) &&
        !incoming.toLowerCase().includes(KEY_PREFIX)
        ? incoming
        : randomUUID();
    },
  });
  const metrics = createMetrics();

  // Bodies are kept as bytes and judged by the handlers, in the contract's order.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.addSchema(errorBodySchema);
  await app.register(swagger, openApiOptions(config));
  installErrorHandlers(app);
  const guard = guardConnections(app.server, config.limits.maxConnections);
  const closing = installDrainOnClose(app, guard);
  installCommonHooks(app, metrics, closing);
  installTelemetry(app, config, deps, metrics);

  const stopping = stopTurnsOnClose(app, options.turnDrainMs ?? TURN_DRAIN_MS);
  const takeTurn = createTakeTurn(deps.services, deps.core, {
    stopping,
    observeWait: (waitedMs) => metrics.turnWait.observe(waitedMs / 1000),
    countWaiting: (change) => metrics.turnsWaiting.inc(change),
    countTokens: (plan, tokens) => metrics.tokens.inc({ plan }, tokens),
  });
  const pingMs = options.streamPingMs ?? DEFAULT_PING_MS;
  await app.register(chatRoutes, { ...deps, takeTurn, pingMs });
  await app.register(v1Routes, { ...deps, takeTurn, pingMs, prefix: '/v1' });
  await app.register(mcpRoutes, { ...deps, takeTurn, version: VERSION });
  await app.register(sessionRoutes, deps);
  await app.register(usageRoutes, deps);
  await app.register(opsRoutes, { ...deps, metrics, coreSettings: config.core });
  await app.register(docsRoutes);
  await app.register(rootRoute, { consoleEnabled: config.adminToken !== undefined });
  // Without a token there is no admin surface at all: /admin paths are unknown routes (404).
  if (config.adminToken !== undefined) {
    await app.register(adminRoutes, { ...deps, adminToken: config.adminToken });
  }

  if (options.sweepSessions) {
    startSessionSweeper(app, deps.services, config.sessionSweepIntervalMs);
    startTokenSweeper(app, deps.services.tokens, deps.services.clock);
  }
  startWebhookSender(app, config.webhook, deps.services, (result) =>
    metrics.webhookAttempts.inc({ result }),
  );
  // Refunds still waiting for the database get a last attempt before the store closes.
  app.addHook('onClose', async () => {
    const lost = await deps.services.quota.flushRefunds();
    if (lost > 0) app.log.error({ refunds: lost }, 'refunds could not be written at shutdown');
  });
  return app;
}

/**
 * The core's upstream attempts in `/metrics`, and traces when `OTEL_EXPORTER_OTLP_ENDPOINT`
 * is set (docs/observability.md); without it no tracer exists and no request pays for one.
 */
function installTelemetry(app: FastifyInstance, config: Config, deps: AppDeps, metrics: Metrics) {
  const tracing = config.tracing ? startTracing(config.tracing) : undefined;
  if (tracing) {
    traceRequests(app, tracing);
    app.addHook('onClose', () => tracing.shutdown());
  }
  const { core } = deps;
  core.observe?.(upstreamTelemetry(metrics.genAi, tracing));
  if (core.upstreams) watchUpstreams(metrics, () => core.upstreams?.() ?? []);
}

function loggerOptions(config: Config, options: BuildAppOptions): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    ...(options.logStream ? { stream: options.logStream } : {}),
  };
}

function installCommonHooks(app: FastifyInstance, metrics: Metrics, closing: () => boolean): void {
  const unmatchedLabels = new Set<string>();
  /** One log line and the metrics of a request, when it is answered or its client left. */
  const observe = (request: FastifyRequest, reply: FastifyReply, status: number) => {
    const matched = request.routeOptions.url;
    const route = matched ?? unmatchedRoute(request);
    const label = matched ?? unmatchedLabel(route, unmatchedLabels);
    metrics.requests.answered(label, request.method, status, reply.elapsedTime / 1000);
    const outcome = request.chatOutcome ?? request.errorCode;
    // An MCP request is a turn when it called the tool `chat` (and so has an outcome).
    if (
      route.startsWith('/api/chat') ||
      route === COMPLETIONS_ROUTE ||
      route === RESPONSES_ROUTE ||
      route === MESSAGES_ROUTE ||
      (route === MCP_ROUTE && request.chatOutcome)
    )
      metrics.requests.turn(route, outcome ?? 'unknown');
    if (!LOGS_INFO.has(request.log.level)) return;
    const line: RequestLine = {
      method: request.method,
      route,
      status,
      ms: Math.round(reply.elapsedTime * 100) / 100,
    };
    if (request.keyId) line.keyId = request.keyId;
    if (outcome) line.outcome = outcome;
    if (request.turnWaitMs !== undefined) line.waitMs = request.turnWaitMs;
    request.log.info(line, 'request');
  };

  // Synchronous hooks (with `done`): an async hook costs a promise per request and hook.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('cache-control', 'no-store');
    reply.header('x-request-id', request.id);
    if (closing()) reply.header('connection', 'close');
    // A client that leaves before its answer is complete: Fastify's onResponse never runs.
    reply.raw.once('close', () => {
      if (reply.raw.writableFinished) return;
      request.chatOutcome = request.partDelivered
        ? 'client_closed_after_delivery'
        : 'client_closed';
      observe(request, reply, CLIENT_CLOSED_STATUS);
    });
    done();
  });

  app.addHook('onResponse', (request, reply, done) => {
    observe(request, reply, reply.statusCode);
    done();
  });
}

/**
 * The route of a request no route matched, for its log line and metrics: the method and the
 * path's first segment, or its first two under an API prefix, without the query string and cut
 * to 64 characters (e.g. `unmatched POST /v1/embeddings`), so an operator sees which APIs clients
 * ask for (docs/api.md). Never more of the path: deeper segments carry session and response ids.
 */
function unmatchedRoute(request: FastifyRequest): string {
  const [first = '', second] = (request.url.split('?')[0] ?? '').split('/').slice(1, 3);
  const segments = second !== undefined && API_PREFIXES.has(first) ? [first, second] : [first];
  const path = `/${segments.join('/')}`.replace(/plauder_\w*/g, 'plauder_…').slice(0, 64);
  return `unmatched ${request.method} ${path}`;
}

/**
 * The metrics take the first `UNMATCHED_LABELS` unmatched routes as labels of their own; later
 * ones share `unmatched`, so clients cannot grow the metrics without bound.
 */
function unmatchedLabel(route: string, seen: Set<string>): string {
  if (seen.has(route)) return route;
  if (seen.size >= UNMATCHED_LABELS) return 'unmatched';
  seen.add(route);
  return route;
}

const UNMATCHED_LABELS = 100;
const API_PREFIXES = new Set(['v1', 'api', 'admin']);

/** Levels at which the request line (info) is written; a quieter logger builds none. */
const LOGS_INFO = new Set(['trace', 'debug', 'info']);

/** The one log line of a request (no message text, no key: docs/contract.md, "Operating it"). */
interface RequestLine {
  method: string;
  route: string;
  status: number;
  ms: number;
  keyId?: string;
  outcome?: string;
  /** How long the turn waited for a place, when it waited. */
  waitMs?: number;
}

/** nginx's "client closed request": the status logged when nobody was left to answer. */
const CLIENT_CLOSED_STATUS = 499;

/** Stops the turns still waiting for their core once `close()` has waited `drainMs`. */
function stopTurnsOnClose(app: FastifyInstance, drainMs: number): Stopping {
  const stopping = createStopping();
  let timer: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    timer = setTimeout(() => stopping.stop(), drainMs);
    timer.unref();
  });
  app.addHook('onClose', async () => clearTimeout(timer));
  return stopping;
}

/**
 * `close()` waits for in-flight requests, but a keep-alive client would hold its
 * connection open until the keep-alive timeout. While closing, every response to a request
 * that arrives says `Connection: close` (the common hooks ask `closing()`), and connections
 * that fall idle are closed. So are connections that never carried a request (a client's
 * pre-opened spare): Node counts them as busy, and `close()` would wait for its header
 * timeout before they go.
 */
function installDrainOnClose(app: FastifyInstance, guard: ConnectionGuard): () => boolean {
  let closing = false;
  let sweeper: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    closing = true;
    sweeper = setInterval(() => {
      app.server.closeIdleConnections();
      for (const socket of guard.sockets()) if (socket.bytesRead === 0) socket.destroy();
    }, 50);
    sweeper.unref();
  });
  app.addHook('onClose', async () => clearInterval(sweeper));
  return () => closing;
}

function openApiOptions(config: Config) {
  const adminToken = {
    type: 'http' as const,
    scheme: 'bearer',
    description: 'The admin token (PLAUDER_ADMIN_TOKEN).',
  };
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'plauder',
        version: VERSION,
        description:
          'Key-protected chat API: POST a message, get a reply (as JSON or as a stream of events). ' +
          'German at /api/chat, English at /api/chat-en. OpenAI-compatible at /v1 ' +
          '(POST /v1/chat/completions, GET /v1/models) for OpenAI clients and SDKs; ' +
          "Anthropic's Messages API at POST /v1/messages for Claude Code and the Anthropic SDKs.",
      },
      components: {
        securitySchemes: {
          bearerKey: {
            type: 'http' as const,
            scheme: 'bearer',
            description: 'An API key: plauder_...',
          },
          ...(config.adminToken === undefined ? {} : { adminToken }),
        },
      },
    },
    // X-Request-Id and a description on every response (the routes declare the rest).
    transformObject: ((document) =>
      'openapiObject' in document
        ? completeResponses(document.openapiObject)
        : document.swaggerObject) satisfies SwaggerTransformObject,
    refResolver: {
      buildLocalReference: (json: { $id?: unknown }, _base: unknown, _frag: unknown, i: number) =>
        String(json.$id ?? `def-${i}`),
    },
  };
}
