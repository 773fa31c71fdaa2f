/**
 * Starts `test/fixtures/openai-upstream.mjs` as a real child process on loopback and drives
 * its control endpoints.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import type { CoreAdapter } from '../../../src/core/core-adapter.js';
import { createOpenAiCore } from '../../../src/core/openai/create-openai-core.js';
import type { OpenAiCoreOptions } from '../../../src/core/openai/openai-config.js';

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
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  body: unknown;
  rawBody: string;
  socket: number;
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
  stop(): Promise<void>;
  /** SIGKILL: the upstream dies without closing its connections in order. */
  kill(): Promise<void>;
}

/** `port` 0 (default): any free port; a fixed port restarts an upstream in place. */
export async function startUpstream(port = 0): Promise<Upstream> {
  const child = spawn(process.execPath, [FIXTURE, String(port)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const boundPort = await readPort(child);
  const origin = `http://127.0.0.1:${boundPort}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${origin}${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`upstream control ${path} answered ${response.status}`);
    return response.json();
  };
  return {
    baseUrl: `${origin}/v1`,
    port: boundPort,
    async script(...steps) {
      await call('POST', '/__control', { responses: steps });
    },
    received: async () => (await call('GET', '/__requests')) as Received,
    async reset() {
      await call('POST', '/__reset');
    },
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
  };

  function end(signal: NodeJS.Signals): Promise<void> {
    return new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  }
}

function readPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const line = text.split('\n')[0];
      if (text.includes('\n') && line !== undefined) resolve(Number(line));
    });
    child.once('exit', (code) => reject(new Error(`upstream exited early with ${code}`)));
  });
}

/** A loopback port with nothing listening: bind to port 0, note it, close. */
export function deadPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
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
    ...overrides,
  };
}

export interface UpstreamCoreFixture {
  /** The upstream process of this test file (started in `beforeAll`). */
  readonly upstream: Upstream;
  /** An adapter against it (or against `baseUrl`); closed after each test. */
  open(overrides?: Partial<OpenAiCoreOptions>, baseUrl?: string): CoreAdapter;
}

/** One upstream process per file, reset before each test; adapters closed after each. */
export function useUpstreamCore(): UpstreamCoreFixture {
  let upstream: Upstream | undefined;
  let core: CoreAdapter | undefined;
  beforeAll(async () => {
    upstream = await startUpstream();
  });
  afterAll(() => upstream?.stop());
  beforeEach(() => upstream?.reset());
  afterEach(async () => {
    await core?.close?.();
    core = undefined;
  });
  const fixture = {
    get upstream(): Upstream {
      if (!upstream) throw new Error('the upstream starts in beforeAll');
      return upstream;
    },
    open(overrides: Partial<OpenAiCoreOptions> = {}, baseUrl?: string): CoreAdapter {
      core = createOpenAiCore(testOptions(baseUrl ?? fixture.upstream.baseUrl, overrides));
      return core;
    },
  };
  return fixture;
}
