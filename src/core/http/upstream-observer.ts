/**
 * @module core/http/upstream-observer
 * What an HTTP core tells the service about each attempt at an upstream, for metrics and
 * traces (docs/observability.md). The core knows nothing of OpenTelemetry or Prometheus: the
 * app gives it an observer, which may hand back headers to send (W3C `traceparent`).
 * Nothing here carries message text, a key or a session.
 */
import type { TokenUsage } from '../core-adapter.js';

export interface AttemptStart {
  /** The upstream's position in the configured list, from 0. */
  readonly upstream: number;
  /** `host` and `port` of the upstream, never its path, query or credentials. */
  readonly host: string;
  readonly port: number;
  /** The model asked for (`gen_ai.request.model`). */
  readonly model: string;
  readonly streamed: boolean;
}

export interface AttemptEnd {
  /** The upstream's HTTP status, when it answered. */
  readonly status?: number;
  /** Why the attempt failed (`timeout`, `connection`, `http_503`, ...); absent on success. */
  readonly errorType?: string;
  readonly usage?: TokenUsage;
  /** The model the upstream says it used (`gen_ai.response.model`). */
  readonly responseModel?: string;
}

export interface AttemptWatch {
  /** Extra request headers for this attempt (trace context). */
  readonly headers: Readonly<Record<string, string>> | undefined;
  /** The first streamed item arrived. */
  firstItem(): void;
  end(end: AttemptEnd): void;
}

export interface UpstreamObserver {
  attempt(start: AttemptStart): AttemptWatch;
}

/** What an adapter can say about an item or a value it read (usage, the model). */
export type Describe<T> = (value: T) => Pick<AttemptEnd, 'usage' | 'responseModel'> | undefined;
