/**
 * Starts `test/fixtures/openai-upstream.mjs` as a real child process on loopback and drives
 * its control endpoints.
 */

import { fileURLToPath } from 'node:url';
import type { OpenAiCoreOptions } from '../../../src/core/openai/openai-config.js';
import { deadPort, startFixtureProcess } from '../../helpers/fixture-process.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/openai-upstream.mjs', import.meta.url));

export interface UpstreamStep {
  status?: number;
  body?: unknown;
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
  content?: string;
  delayMs?: number;
  hang?: boolean;
  close?: boolean;
  /** How a streamed answer goes (see test/fixtures/openai-upstream.mjs). */
  stream?: {
    pieces?: string[];
    gapMs?: number;
    firstTokenMs?: number;
    breakAfter?: number;
    hangAfter?: number;
    /** After this many pieces, wait for `release()`. */
    holdAfter?: number;
    noUsage?: boolean;
    noDone?: boolean;
    noFinish?: boolean;
    usage?: { prompt_tokens: number; completion_tokens: number };
    /** That many pieces of `pieceChars` letters (a reply of several MB). */
    large?: { pieces: number; pieceChars: number };
  };
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  body: unknown;
  rawBody: string;
  socket: number;
  /** Unix ms when the upstream received it. */
  receivedAt: number;
  /** Unix ms when its client closed the connection before the answer was complete. */
  abortedAt?: number;
}

export interface Received {
  requests: ReceivedRequest[];
  /** Distinct sockets that carried chat requests since the last reset. */
  sockets: number;
  /** How many of those sockets are still open. */
  openSockets: number;
}

export interface Upstream {
  /** Base URL as an operator would configure it, e.g. `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string;
  readonly port: number;
  script(...steps: UpstreamStep[]): Promise<void>;
  received(): Promise<Received>;
  reset(): Promise<void>;
  /** Lets a stream held by `holdAfter` go on (or the next one, if none is held yet). */
  release(): Promise<void>;
  stop(): Promise<void>;
  /** SIGKILL: the upstream dies without closing its connections in order. */
  kill(): Promise<void>;
}

/** `port` 0 (default): any free port; a fixed port restarts an upstream in place. */
export async function startUpstream(port = 0): Promise<Upstream> {
  const fixture = await startFixtureProcess(FIXTURE, [String(port)]);
  return {
    baseUrl: `${fixture.origin}/v1`,
    port: fixture.port,
    async script(...steps) {
      await fixture.control('POST', '/__control', { responses: steps });
    },
    received: async () => (await fixture.control('GET', '/__requests')) as Received,
    async reset() {
      await fixture.control('POST', '/__reset');
    },
    async release() {
      await fixture.control('POST', '/__release');
    },
    stop: () => fixture.end('SIGTERM'),
    kill: () => fixture.end('SIGKILL'),
  };
}

export { deadPort };

/** A stream scripted with `holdAfter`, released once the client has seen what came before. */
export interface HeldStream {
  /** Call when the client received the last piece before the hold: the upstream goes on. */
  seen(): void;
  /** True when `seen()` came while the upstream still held the rest back. */
  readonly seenWhileHeld: boolean;
}

/**
 * Releases the upstream's held stream on `seen()`. A front door that buffered the stream
 * would never let the client see anything before the hold ends, so after `fallbackMs` the
 * stream is released anyway: the test then ends on `seenWhileHeld` being false, not on its
 * timeout.
 */
export function releaseWhenSeen(upstream: Upstream, fallbackMs = 20_000): HeldStream {
  let released = false;
  let seenWhileHeld = false;
  const release = () => {
    if (released) return;
    released = true;
    void upstream.release();
  };
  const fallback = setTimeout(release, fallbackMs);
  return {
    seen() {
      if (released) return;
      seenWhileHeld = true;
      clearTimeout(fallback);
      release();
    },
    get seenWhileHeld() {
      return seenWhileHeld;
    },
  };
}

/** Options for tests: fast retries so a test run stays short. */
export function testOptions(
  baseUrl: string,
  overrides: Partial<OpenAiCoreOptions> = {},
): OpenAiCoreOptions {
  return {
    baseUrl,
    apiKey: 'sk-test-secret-1234567890',
    model: 'test-model',
    systemPrompts: { de: 'Antworte auf Deutsch.', en: 'Answer in English.' },
    temperature: undefined,
    maxTokens: undefined,
    timeoutMs: 2_000,
    maxRetries: 2,
    retryBaseDelayMs: 10,
    retryMaxDelayMs: 50,
    maxConnections: 8,
    firstTokenTimeoutMs: 2_000,
    tokenGapTimeoutMs: 1_000,
    fallbacks: [],
    breakerFailures: 5,
    breakerCooldownMs: 30_000,
    ...overrides,
  };
}
