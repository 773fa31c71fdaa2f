/**
 * @module tracing/tracing
 * OpenTelemetry traces (docs/observability.md), built only when `OTEL_EXPORTER_OTLP_ENDPOINT`
 * is set: without it there is no provider, no hook and no per-request work.
 *
 * - A server span per request, named `{method} {route template}`, with the template and the
 *   status; a W3C `traceparent` from the client makes it a child of the client's span.
 * - The span is made active for the route's handler (AsyncLocalStorage), so the core's
 *   client spans (src/tracing/upstream-telemetry.ts) become its children and the upstream
 *   gets a `traceparent` of its own.
 * - Attributes never hold message text, a key, a key id, a session id, a raw URL or a query:
 *   only the route template, the method and the status.
 */
import {
  context,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TracingConfig } from '../config/tracing-config.js';
import { VERSION } from '../version.js';

export interface Tracing {
  readonly tracer: Tracer;
  readonly propagator: W3CTraceContextPropagator;
  /** Sends the spans still buffered and stops the exporter. */
  shutdown(): Promise<void>;
}

/** How long `shutdown` may wait for the receiver; a stopping service does not hang on it. */
const EXPORT_TIMEOUT_MS = 5_000;

export function startTracing(config: TracingConfig): Tracing {
  const exporter = new OTLPTraceExporter({
    url: config.tracesUrl,
    timeoutMillis: EXPORT_TIMEOUT_MS,
  });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': config.serviceName,
      'service.version': VERSION,
    }),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  // The active span follows the request through its awaits; set once per process (a second
  // app in the same process, as in tests, shares it: it holds no state of its own).
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return {
    tracer: provider.getTracer('plauder', VERSION),
    propagator: new W3CTraceContextPropagator(),
    shutdown: () => provider.shutdown(),
  };
}

/** Where a request's server span is kept while the request runs. */
const SPANS = new WeakMap<FastifyRequest, Span>();

/** A server span per request, active for its handler; ended when its answer is done. */
export function traceRequests(app: FastifyInstance, tracing: Tracing): void {
  const { tracer, propagator } = tracing;
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url;
    const parent = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
    const span = tracer.startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': request.method,
          ...(route === undefined ? {} : { 'http.route': route }),
        },
      },
      parent,
    );
    SPANS.set(request, span);
    // Answered or abandoned, the span ends once (onResponse does not run for a client gone).
    reply.raw.once('close', () => {
      const status = reply.raw.writableFinished ? reply.statusCode : undefined;
      if (status === undefined) span.setAttribute('error.type', 'client_closed');
      else {
        span.setAttribute('http.response.status_code', status);
        if (status >= 500) {
          span.setAttribute('error.type', String(status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      span.end();
      SPANS.delete(request);
    });
    done();
  });
  // After the body is read: the handler runs inside `done`, with the span active.
  app.addHook('preHandler', (request, _reply, done) => {
    const span = SPANS.get(request);
    if (span === undefined) return done();
    context.with(trace.setSpan(context.active(), span), done);
  });
}
