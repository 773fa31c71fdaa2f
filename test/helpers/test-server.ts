/**
 * Starts the real app on a loopback port with a database of its own (SQLite or
 * PostgreSQL, see test-database.ts), and drives it over HTTP. One instance per test file
 * (or per test when state must be fresh).
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { type BuildAppOptions, buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config/config.js';
import type { CoreAdapter } from '../../src/core/core-adapter.js';
import { createCore } from '../../src/core/create-core.js';
import { createServices, type Services } from '../../src/services.js';
import { createStore } from '../../src/storage/create-database.js';
import { loadSecret } from '../../src/storage/secret.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export { tempDir } from './test-database.js';

export interface TestServer {
  readonly url: string;
  /** The database, dropped by `close()` unless it was passed in. */
  readonly database: TestDatabase;
  /** A scratch directory, removed with the database. */
  readonly dir: string;
  /** The SQLite file; empty on PostgreSQL. */
  readonly dbFile: string;
  /** The environment the server was configured from: give it to the CLI to share the database. */
  readonly env: Record<string, string>;
  readonly config: Config;
  readonly services: Services;
  readonly app: FastifyInstance;
  /** Every JSON log line the server wrote. */
  readonly logs: string[];
  createKey(options?: {
    plan?: string;
    active?: boolean;
    name?: string;
  }): Promise<{ id: string; key: string }>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  readonly env?: Record<string, string>;
  readonly clock?: () => number;
  /** The key cache's real-time clock, for tests that must not see an entry age out. */
  readonly keyCacheMonotonic?: () => number;
  readonly core?: CoreAdapter;
  /** Share a database with other servers or processes; the caller drops it. */
  readonly database?: TestDatabase;
  readonly app?: Omit<BuildAppOptions, 'logStream'>;
}

/**
 * Built-in cores by their settings, shared by the servers of this process: the core keeps
 * nothing of a conversation (the session is in the database), and building its knowledge
 * index takes 40-190 ms, for each of the suite's hundreds of servers.
 */
const builtinCores = new Map<string, Promise<CoreAdapter>>();

function builtinCore(config: Config): Promise<CoreAdapter> {
  const settings = JSON.stringify(config.core);
  let core = builtinCores.get(settings);
  if (core === undefined) {
    core = createCore(config.core);
    builtinCores.set(settings, core);
  }
  return core;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const database = options.database ?? (await createTestDatabase());
  const env: Record<string, string> = {
    ...database.env,
    PLAUDER_LOG_LEVEL: 'info',
    ...options.env,
  };
  const config = loadConfig(env);
  const store = await createStore(config.database);
  const services = createServices(
    config,
    store,
    loadSecret(config.secret),
    options.clock ?? Date.now,
    options.keyCacheMonotonic,
  );
  const shared = options.core === undefined && config.core.kind === 'builtin';
  const core =
    options.core ??
    (shared
      ? await builtinCore(config)
      : await createCore(config.core, options.clock ? { now: options.clock } : {}));
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const app = await buildApp(config, { services, core }, { ...options.app, logStream });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}`,
    database,
    dir: database.dir,
    dbFile: database.file,
    env,
    config,
    services,
    app,
    logs,
    async createKey({ plan = 'standard', active = true, name = 'test key' } = {}) {
      const result = await services.keys.create({ name, plan, active });
      if (!result.ok) throw new Error(`createKey: ${result.problem}`);
      return { id: result.value.id, key: result.value.key };
    },
    async close() {
      await app.close();
      if (!shared) await core.close?.();
      // A test may have closed the store already (to simulate a lost database).
      await store.close().catch(() => {});
      if (!options.database) await database.drop();
    },
  };
}

export interface HttpResult {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: any;
}

export async function http(
  url: string,
  init: {
    method?: string;
    key?: string;
    headers?: Record<string, string>;
    body?: unknown;
    raw?: string | Buffer;
  } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined) headers.authorization = `Bearer ${init.key}`;
  let body: string | Buffer | undefined = init.raw;
  if (init.body !== undefined) {
    body = JSON.stringify(init.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, {
    method: init.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

export function chat(
  server: { url: string },
  key: string,
  body: unknown,
  path = '/api/chat',
): Promise<HttpResult> {
  return http(`${server.url}${path}`, { key, body });
}

/** The key with its last character changed: never the key itself, whatever that character is. */
export function misspelled(key: string): string {
  return `${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}`;
}
