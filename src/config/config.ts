/**
 * @module config/config
 * One schema for every setting. `loadConfig(env)` parses the environment once, reports
 * every problem at once (ConfigError) and returns a frozen object. Only `server.ts` and
 * the CLI entry read `process.env`; everything else receives a `Config`.
 */
import path from 'node:path';
import { BUILTIN_SETTINGS, readBuiltinCoreConfig } from '../core/builtin/builtin-config.js';
import { CORE_KINDS, type CoreKind, type CoreSettings } from '../core/core-settings.js';
import { OPENAI_SETTINGS, readOpenAiCoreConfig } from '../core/openai/openai-config.js';
import { RASA_SETTINGS, readRasaCoreConfig } from '../core/rasa/rasa-config.js';
import { DEFAULT_PLANS, type Plans, parsePlans } from '../plans/plans.js';
import {
  duration,
  type Env,
  integer,
  matching,
  oneOf,
  optional,
  readSettings,
  type Setting,
  setting,
  text,
} from '../util/settings.js';
import { readTracingConfig, TRACING_SETTINGS, type TracingConfig } from './tracing-config.js';
import { readWebhookConfig, WEBHOOK_SETTINGS, type WebhookConfig } from './webhook-config.js';

/** How long a client may take, and how many may be connected at once (see `connection-guard.ts`). */
interface ConnectionLimits {
  /** Receiving the whole request, headers and body: 408 after it. */
  readonly requestTimeoutMs: number;
  /** Receiving the request line and headers: 408 after it (idle new connections too). */
  readonly headersTimeoutMs: number;
  /** How long an idle keep-alive connection is kept open between requests. */
  readonly keepAliveTimeoutMs: number;
  /** Open connections at most; a new one beyond it closes the oldest that carries no request. */
  readonly maxConnections: number;
  /** A streamed reply whose client reads nothing for this long is cut off. */
  readonly streamStallTimeoutMs: number;
  /** Turns of one key running at once on this instance, unless its plan sets its own. */
  readonly keyConcurrency: number;
  /** Turns of one key waiting for a place at once on this instance, unless its plan sets its own. */
  readonly keyQueue: number;
  /** How long a turn waits for a place of its key before 429 `too_many_concurrent`. */
  readonly keyQueueTimeoutMs: number;
}

export interface Config {
  readonly host: string;
  readonly port: number;
  /** `sqlite:<path>`, `sqlite::memory:` or `postgres://…`. */
  readonly database: DatabaseConfig;
  readonly plans: Plans;
  /** IANA time zone of the monthly quota window. */
  readonly quotaTimeZone: string;
  readonly sessionTtlMs: number;
  /** How many earlier turns the core receives (and the store keeps) per session. */
  readonly sessionWindow: number;
  readonly sessionSweepIntervalMs: number;
  /**
   * The most bytes a session's stored window holds, every part of its turns counted (text,
   * tool calls and results, images): the oldest turns leave first, a larger turn is not stored.
   */
  readonly sessionMaxBytes: number;
  /**
   * Hang-ups before delivery per key and clock minute that are refunded to the month; the
   * ones beyond count as delivered (docs/quota-and-limits.md, "Hang-ups").
   */
  readonly freeHangups: number;
  /** How long the outcome of a request with an Idempotency-Key is replayed. */
  readonly idempotencyTtlMs: number;
  /**
   * How long a running Idempotency-Key request's claim holds unless renewed (its process
   * renews it every third): how long a retry waits after that process died.
   */
  readonly idempotencyLeaseMs: number;
  readonly messageMaxChars: number;
  readonly bodyLimitBytes: number;
  /**
   * The body limit of `/v1/chat/completions`, whose requests may carry images and an agent's
   * tool results; read only after the key is known.
   */
  readonly completionBodyLimitBytes: number;
  readonly limits: ConnectionLimits;
  readonly core: CoreSettings;
  readonly coreTimeoutMs: number;
  readonly logLevel: string;
  /** 32-byte secret that encrypts session turns at rest; from PLAUDER_SECRET or a file. */
  readonly secret: SecretSource;
  /** Bearer token of the admin API; undefined = the admin API and console are 404. */
  readonly adminToken: string | undefined;
  /** Where events are sent (docs/contract.md, "Events"); undefined = no receiver, no events are recorded. */
  readonly webhook: WebhookConfig | undefined;
  /** OpenTelemetry traces; `undefined` (off) without `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly tracing: TracingConfig | undefined;
}

export type DatabaseConfig =
  | { readonly dialect: 'sqlite'; readonly file: string }
  | {
      readonly dialect: 'postgres';
      /** The full connection URL, password included: never log it (see `redactUrl`). */
      readonly url: string;
      readonly poolSize: number;
    };

export type SecretSource =
  | { readonly kind: 'value'; readonly value: Buffer }
  | { readonly kind: 'file'; readonly file: string };

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** Sessions and stored outcomes are compared with timestamps, never waited for with a timer. */
const TEN_YEARS_MS = 3650 * 86_400_000;
const ADMIN_TOKEN_MIN_LENGTH = 24;

/** The settings of the service itself; the cores' and the webhook's are in their modules. */
const SETTINGS = {
  host: setting('HOST', text(), '127.0.0.1'),
  port: setting('PORT', integer(0, 65_535), '3000'),
  databaseUrl: setting(
    'PLAUDER_DATABASE_URL',
    matching('sqlite:<path> or postgres://…', () => true, { quote: false }),
    'sqlite:./data/plauder.db',
  ),
  poolSize: setting('PLAUDER_DATABASE_POOL_SIZE', integer(1, 1000), '10'),
  plans: setting('PLAUDER_PLANS', text(), DEFAULT_PLANS),
  quotaTimeZone: setting(
    'PLAUDER_QUOTA_TIMEZONE',
    matching(
      'an IANA time zone such as Europe/Berlin',
      (zone) => canonicalZone(zone) !== undefined,
    ),
    'UTC',
  ),
  sessionTtlMs: setting(
    'PLAUDER_SESSION_TTL',
    duration({ max: TEN_YEARS_MS, example: '30s, 15m, 24h or 30d' }),
    '30d',
  ),
  sessionWindow: setting('PLAUDER_SESSION_WINDOW', integer(0, 1000), '20'),
  sessionSweepIntervalMs: setting('PLAUDER_SESSION_SWEEP_INTERVAL', duration(), '1h'),
  sessionMaxBytes: setting('PLAUDER_SESSION_MAX_BYTES', integer(1024, 1_073_741_824), '1048576'),
  freeHangups: setting('PLAUDER_FREE_HANGUPS', integer(0, 1_000_000), '10'),
  idempotencyTtlMs: setting('PLAUDER_IDEMPOTENCY_TTL', duration({ max: TEN_YEARS_MS }), '24h'),
  idempotencyLeaseMs: setting(
    'PLAUDER_IDEMPOTENCY_LEASE',
    duration({ min: 300, max: 10 * 60_000 }),
    '15s',
  ),
  messageMaxChars: optional('PLAUDER_MESSAGE_MAX_CHARS', integer(1, 1_000_000)),
  bodyLimitBytes: setting('PLAUDER_BODY_LIMIT', integer(1024, 16_777_216), '65536'),
  completionBodyLimitBytes: setting(
    'PLAUDER_COMPLETION_BODY_LIMIT',
    integer(1024, 67_108_864),
    '4194304',
  ),
  requestTimeoutMs: setting('PLAUDER_REQUEST_TIMEOUT', duration({ min: 100 }), '30s'),
  headersTimeoutMs: setting('PLAUDER_HEADERS_TIMEOUT', duration({ min: 100 }), '10s'),
  keepAliveTimeoutMs: setting('PLAUDER_KEEP_ALIVE_TIMEOUT', duration({ min: 100 }), '5s'),
  maxConnections: setting('PLAUDER_MAX_CONNECTIONS', integer(1, 1_000_000), '10000'),
  streamStallTimeoutMs: setting('PLAUDER_STREAM_STALL_TIMEOUT', duration({ min: 100 }), '30s'),
  keyConcurrency: setting('PLAUDER_KEY_CONCURRENCY', integer(1, 1_000_000), '16'),
  keyQueue: setting('PLAUDER_KEY_QUEUE', integer(0, 1_000_000), '256'),
  keyQueueTimeoutMs: setting('PLAUDER_KEY_QUEUE_TIMEOUT', duration({ min: 1 }), '30s'),
  core: setting('PLAUDER_CORE', oneOf(CORE_KINDS), 'builtin'),
  coreTimeoutMs: setting('PLAUDER_CORE_TIMEOUT', duration(), '60s'),
  logLevel: setting('PLAUDER_LOG_LEVEL', oneOf(LOG_LEVELS), 'info'),
  secret: optional(
    'PLAUDER_SECRET',
    matching(
      '32 random bytes in base64 (openssl rand -base64 32)',
      (value) => Buffer.from(value, 'base64').length === 32,
      { quote: false },
    ),
  ),
  adminToken: optional(
    'PLAUDER_ADMIN_TOKEN',
    matching(
      `at least ${ADMIN_TOKEN_MIN_LENGTH} characters without spaces (openssl rand -base64 32)`,
      (token) => token.length >= ADMIN_TOKEN_MIN_LENGTH && !/\s/.test(token),
      { quote: false },
    ),
  ),
} satisfies Record<string, Setting<unknown>>;

/**
 * Every setting the service reads, with its default: the table of docs/configuration.md is
 * tested against this list (test/config/settings.test.ts).
 */
export const ALL_SETTINGS: readonly Setting<unknown>[] = [
  ...Object.values(SETTINGS),
  ...BUILTIN_SETTINGS,
  ...OPENAI_SETTINGS,
  ...RASA_SETTINGS,
  ...WEBHOOK_SETTINGS,
  ...TRACING_SETTINGS,
];

export function loadConfig(env: Env): Config {
  const problems: string[] = [];
  const s = readSettings(env, SETTINGS, problems);
  const database = parseDatabaseUrl(s.databaseUrl, s.poolSize, problems);
  const plans = readPlans(s.plans, problems);
  const webhook = readWebhookConfig(env, problems);
  const tracing = readTracingConfig(env, problems);
  if (s.headersTimeoutMs > s.requestTimeoutMs) {
    problems.push('PLAUDER_HEADERS_TIMEOUT: expected at most PLAUDER_REQUEST_TIMEOUT');
  }
  const config: Config = {
    host: s.host,
    port: s.port,
    database,
    plans,
    quotaTimeZone: canonicalZone(s.quotaTimeZone) ?? 'UTC',
    sessionTtlMs: s.sessionTtlMs,
    sessionWindow: s.sessionWindow,
    sessionSweepIntervalMs: s.sessionSweepIntervalMs,
    sessionMaxBytes: s.sessionMaxBytes,
    freeHangups: s.freeHangups,
    idempotencyTtlMs: s.idempotencyTtlMs,
    idempotencyLeaseMs: s.idempotencyLeaseMs,
    messageMaxChars: s.messageMaxChars ?? defaultMessageMaxChars(s.core),
    bodyLimitBytes: s.bodyLimitBytes,
    completionBodyLimitBytes: s.completionBodyLimitBytes,
    limits: Object.freeze({
      requestTimeoutMs: s.requestTimeoutMs,
      headersTimeoutMs: s.headersTimeoutMs,
      keepAliveTimeoutMs: s.keepAliveTimeoutMs,
      maxConnections: s.maxConnections,
      streamStallTimeoutMs: s.streamStallTimeoutMs,
      keyConcurrency: s.keyConcurrency,
      keyQueue: s.keyQueue,
      keyQueueTimeoutMs: s.keyQueueTimeoutMs,
    }),
    core: readCoreSettings(s.core, env, problems),
    coreTimeoutMs: s.coreTimeoutMs,
    logLevel: s.logLevel,
    secret: readSecret(
      s.secret,
      env.PLAUDER_SECRET?.trim() ? 'given' : 'unset',
      database,
      problems,
    ),
    adminToken: s.adminToken,
    webhook,
    tracing,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

function parseDatabaseUrl(url: string, poolSize: number, problems: string[]): DatabaseConfig {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (file === ':memory:') return { dialect: 'sqlite', file };
    if (file.length === 0) problems.push('PLAUDER_DATABASE_URL: sqlite: needs a file path');
    return { dialect: 'sqlite', file: path.resolve(file || '.') };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    if (!URL.canParse(url)) {
      problems.push(`PLAUDER_DATABASE_URL: not a valid URL: "${redactUrl(url)}"`);
    }
    return { dialect: 'postgres', url, poolSize };
  }
  problems.push(
    `PLAUDER_DATABASE_URL: expected sqlite:<path> or postgres://…, got "${redactUrl(url)}"`,
  );
  return { dialect: 'sqlite', file: ':memory:' };
}

/** Database URLs may carry passwords; never echo them. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@').slice(0, 80);
}

function readPlans(text: string, problems: string[]): Plans {
  const result = parsePlans(text);
  if (!result.ok) {
    for (const problem of result.problems) problems.push(`PLAUDER_PLANS: ${problem}`);
    return parsePlans(DEFAULT_PLANS).plans ?? new Map();
  }
  return result.plans;
}

/** The zone's canonical name, or undefined when `Intl` does not know it. */
function canonicalZone(zone: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

function readCoreSettings(kind: CoreKind, env: Env, problems: string[]): CoreSettings {
  switch (kind) {
    case 'builtin':
      return { kind, options: readBuiltinCoreConfig(env, problems) };
    case 'openai':
      return { kind, options: readOpenAiCoreConfig(env, problems) };
    case 'rasa':
      return { kind, options: readRasaCoreConfig(env, problems) };
    case 'placeholder':
      return { kind };
  }
}

/** `raw` is undefined when unset or invalid (`given`: invalid, and already reported). */
function readSecret(
  raw: string | undefined,
  given: 'given' | 'unset',
  database: DatabaseConfig,
  problems: string[],
): SecretSource {
  if (raw) return { kind: 'value', value: Buffer.from(raw, 'base64') };
  if (given === 'given') return { kind: 'value', value: Buffer.alloc(0) };
  if (database.dialect === 'postgres') {
    // Every instance must seal and read sessions with the same secret, and keeping it
    // in the database it protects would defeat the encryption at rest.
    problems.push(
      'PLAUDER_SECRET: required with PostgreSQL, the same on every instance (openssl rand -base64 32)',
    );
    return { kind: 'value', value: Buffer.alloc(0) };
  }
  if (database.file === ':memory:') return { kind: 'value', value: Buffer.alloc(0) };
  return { kind: 'file', file: `${database.file}.secret` };
}

/**
 * The longest message when `PLAUDER_MESSAGE_MAX_CHARS` is unset (docs/configuration.md): 4 000
 * characters for the built-in and Rasa cores, which answer a question, not a pasted page; no
 * limit of its own for a gateway core, whose turns are bounded by the completion body limit.
 */
function defaultMessageMaxChars(core: CoreKind): number {
  return core === 'openai' ? Number.MAX_SAFE_INTEGER : 4000;
}
