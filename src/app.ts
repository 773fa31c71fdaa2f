/**
 * @module app
 * `buildApp(config, deps)` assembles the whole service as a Fastify instance and never
 * listens: `server.ts` does that, tests and benchmarks listen on a loopback port.
 */
import { randomUUID } from 'node:crypto';
import swagger from '@fastify/swagger';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import type { Config } from './config/config.js';
import { errorBody } from './errors/api-error.js';
import { statusOf } from './errors/error-codes.js';
import { clientErrorHandler, installErrorHandlers } from './errors/error-handler.js';
import { KEY_PREFIX } from './keys/key-format.js';
import { adminRoutes } from './routes/admin/admin-routes.js';
import { chatRoutes } from './routes/api/chat/chat-routes.js';
import { sessionRoutes } from './routes/api/session-routes.js';
import { usageRoutes } from './routes/api/usage-routes.js';
import { docsRoutes } from './routes/ops/docs-routes.js';
import { createMetrics, type Metrics } from './routes/ops/metrics.js';
import { opsRoutes } from './routes/ops/ops-routes.js';
import { errorBodySchema } from './routes/schemas.js';
import type { AppDeps } from './services.js';
import { startSessionSweeper } from './sessions/session-sweeper.js';

export interface BuildAppOptions {
  /** Where JSON logs go (default stdout); tests capture them here. */
  readonly logStream?: NodeJS.WritableStream;
  /** Run the retention sweep on a timer (the server does; the CLI does not). */
  readonly sweepSessions?: boolean;
}

const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
export const APP_VERSION = '0.1.0';

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
  installCommonHooks(app, metrics);
  installDrainOnClose(app);

  await app.register(chatRoutes, deps);
  await app.register(sessionRoutes, deps);
  await app.register(usageRoutes, deps);
  await app.register(opsRoutes, { ...deps, metrics });
  await app.register(docsRoutes);
  // Without a token there is no admin surface at all: /admin paths are unknown routes (404).
  if (config.adminToken !== undefined) {
    await app.register(adminRoutes, { ...deps, adminToken: config.adminToken });
  }

  if (options.sweepSessions) startSessionSweeper(app, deps.services);
  // Refunds still waiting for the database get a last attempt before the store closes.
  app.addHook('onClose', async () => {
    const lost = await deps.services.quota.flushRefunds();
    if (lost > 0) app.log.error({ refunds: lost }, 'refunds could not be written at shutdown');
  });
  return app;
}

function loggerOptions(config: Config, options: BuildAppOptions): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    ...(options.logStream ? { stream: options.logStream } : {}),
  };
}

function installCommonHooks(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    reply.header('x-request-id', request.id);
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    metrics.requests.inc({ route, method: request.method, status });
    metrics.duration.observe({ route }, reply.elapsedTime / 1000);
    const outcome = request.chatOutcome ?? request.errorCode;
    if (route.startsWith('/api/chat'))
      metrics.chatOutcomes.inc({ endpoint: route, outcome: outcome ?? 'unknown' });
    request.log.info(
      {
        method: request.method,
        route,
        status,
        ms: Math.round(reply.elapsedTime * 100) / 100,
        ...(request.keyId ? { keyId: request.keyId } : {}),
        ...(outcome ? { outcome } : {}),
      },
      'request',
    );
  });
}

/**
 * `close()` waits for in-flight requests, but a keep-alive client would hold its
 * connection open until the keep-alive timeout. While closing, every response says
 * `Connection: close` and connections that fall idle are closed.
 */
function installDrainOnClose(app: FastifyInstance): void {
  let closing = false;
  let sweeper: NodeJS.Timeout | undefined;
  app.addHook('preClose', async () => {
    closing = true;
    sweeper = setInterval(() => app.server.closeIdleConnections(), 50);
    sweeper.unref();
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  app.addHook('onClose', async () => clearInterval(sweeper));
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
        version: APP_VERSION,
        description:
          'Key-protected chat API: POST a message, get a reply. German at /api/chat, English at /api/chat-en.',
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
    refResolver: {
      buildLocalReference: (json: { $id?: unknown }, _base: unknown, _frag: unknown, i: number) =>
        String(json.$id ?? `def-${i}`),
    },
  };
}
