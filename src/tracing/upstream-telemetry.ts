/**
 * @module tracing/upstream-telemetry
 * What the service makes of each upstream attempt (src/core/http/upstream-observer.ts): the
 * GenAI metrics of `/metrics` and, when tracing is on, a client span following the
 * OpenTelemetry GenAI semantic conventions (`chat {model}`, `gen_ai.*`, `server.address`,
 * `error.type`) whose context goes upstream as `traceparent` (docs/observability.md).
 */
import { context, defaultTextMapSetter, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { AttemptStart, UpstreamObserver } from '../core/http/upstream-observer.js';
import type { GenAiMetrics } from '../routes/ops/metrics.js';
import type { Tracing } from './tracing.js';

export function upstreamTelemetry(
  metrics: GenAiMetrics,
  tracing: Tracing | undefined,
): UpstreamObserver {
  return {
    attempt(start) {
      const began = performance.now();
      let firstItemAt: number | undefined;
      const span = tracing ? startSpan(tracing, start) : undefined;
      return {
        headers: span?.headers,
        firstItem() {
          if (firstItemAt !== undefined) return;
          firstItemAt = performance.now();
          metrics.timeToFirstToken(start.model, (firstItemAt - began) / 1000);
        },
        end(end) {
          metrics.requestDuration(start.model, (performance.now() - began) / 1000, end.errorType);
          if (end.usage) metrics.tokenUsage(start.model, end.usage);
          if (span === undefined) return;
          const attributes = span.span;
          if (end.status !== undefined)
            attributes.setAttribute('http.response.status_code', end.status);
          if (end.responseModel !== undefined) {
            attributes.setAttribute('gen_ai.response.model', end.responseModel);
          }
          if (end.usage) {
            attributes.setAttribute('gen_ai.usage.input_tokens', end.usage.promptTokens);
            attributes.setAttribute('gen_ai.usage.output_tokens', end.usage.completionTokens);
          }
          if (end.errorType !== undefined) {
            attributes.setAttribute('error.type', end.errorType);
            attributes.setStatus({ code: SpanStatusCode.ERROR });
          }
          attributes.end();
        },
      };
    },
  };
}

function startSpan(tracing: Tracing, start: AttemptStart) {
  const parent = context.active();
  const span = tracing.tracer.startSpan(
    start.model === '' ? 'chat' : `chat ${start.model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': start.model,
        'server.address': start.host,
        'server.port': start.port,
        'plauder.upstream.index': start.upstream,
        'plauder.upstream.streamed': start.streamed,
      },
    },
    parent,
  );
  const headers: Record<string, string> = {};
  tracing.propagator.inject(trace.setSpan(parent, span), headers, defaultTextMapSetter);
  return { span, headers };
}
