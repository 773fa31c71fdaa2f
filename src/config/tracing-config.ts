/**
 * @module config/tracing-config
 * Traces (docs/observability.md): on when `OTEL_EXPORTER_OTLP_ENDPOINT` names an OTLP/HTTP
 * receiver, off otherwise. The standard OpenTelemetry variable names, so a deployment that
 * already sets them for other services needs nothing new.
 */
import {
  type Env,
  httpUrl,
  optional,
  readSettings,
  type Setting,
  setting,
  text,
} from '../util/settings.js';

export interface TracingConfig {
  /** Where spans are POSTed: the endpoint with `/v1/traces` (OTLP/HTTP, JSON). */
  readonly tracesUrl: string;
  /** `service.name` of every span. */
  readonly serviceName: string;
}

const SETTINGS = {
  endpoint: optional('OTEL_EXPORTER_OTLP_ENDPOINT', httpUrl('e.g. http://127.0.0.1:4318')),
  serviceName: setting('OTEL_SERVICE_NAME', text(), 'plauder'),
} satisfies Record<string, Setting<unknown>>;

export const TRACING_SETTINGS: readonly Setting<unknown>[] = Object.values(SETTINGS);

/** `undefined` when no endpoint is set: no tracer is built and no request pays for one. */
export function readTracingConfig(env: Env, problems: string[]): TracingConfig | undefined {
  const { endpoint, serviceName } = readSettings(env, SETTINGS, problems);
  if (endpoint === undefined) return undefined;
  // The variable is the receiver's base; each signal has its path (OTLP exporter spec).
  const base = endpoint.replace(/\/+$/, '');
  return Object.freeze({ tracesUrl: `${base}/v1/traces`, serviceName });
}
