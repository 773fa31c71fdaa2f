/**
 * @module config/config
 * One schema for every setting. `loadConfig(env)` parses the environment once, reports
 * every problem at once (ConfigError) and returns a frozen object. Only `server.ts` and
 * the CLI entry read `process.env`; everything else receives a `Config`.
 */
import path from 'node:path';
import { type BuiltinCoreOptions, readBuiltinCoreConfig } from '../core/builtin/builtin-config.js';
import { type OpenAiCoreOptions, readOpenAiCoreConfig } from '../core/openai/openai-config.js';
import { parseDuration } from '../util/duration.js';
import { type Plans, parsePlans } from './plans.js';

export type CoreKind = 'builtin' | 'openai' | 'placeholder';

/** The chosen core and its settings, read and checked with the rest of the config. */
export type CoreSettings =
  | { readonly kind: 'builtin'; readonly options: BuiltinCoreOptions }
  | { readonly kind: 'openai'; readonly options: OpenAiCoreOptions }
  | { readonly kind: 'placeholder' };

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
  readonly messageMaxChars: number;
  readonly bodyLimitBytes: number;
  readonly core: CoreSettings;
  readonly coreTimeoutMs: number;
  readonly logLevel: string;
  /** 32-byte secret that encrypts session turns at rest; from PLAUDER_SECRET or a file. */
  readonly secret: SecretSource;
  /** Bearer token of the admin API; undefined = the admin API and console are 404. */
  readonly adminToken: string | undefined;
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

type Env = Readonly<Record<string, string | undefined>>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const CORE_KINDS: readonly CoreKind[] = ['builtin', 'openai', 'placeholder'];

export function loadConfig(env: Env): Config {
  const problems: string[] = [];
  const database = parseDatabaseUrl(env, problems);
  const config: Config = {
    host: env.HOST ?? '127.0.0.1',
    port: readInt(env, 'PORT', 3000, 0, 65_535, problems),
    database,
    plans: readPlans(env, problems),
    quotaTimeZone: readTimeZone(env, problems),
    sessionTtlMs: readDuration(env, 'PLAUDER_SESSION_TTL', '30d', problems),
    sessionWindow: readInt(env, 'PLAUDER_SESSION_WINDOW', 20, 0, 1000, problems),
    sessionSweepIntervalMs: readDuration(env, 'PLAUDER_SESSION_SWEEP_INTERVAL', '1h', problems),
    messageMaxChars: readInt(env, 'PLAUDER_MESSAGE_MAX_CHARS', 4000, 1, 1_000_000, problems),
    bodyLimitBytes: readInt(env, 'PLAUDER_BODY_LIMIT', 65_536, 1024, 16_777_216, problems),
    core: readCoreSettings(env, problems),
    coreTimeoutMs: readDuration(env, 'PLAUDER_CORE_TIMEOUT', '60s', problems),
    logLevel: readLogLevel(env, problems),
    secret: readSecret(env, database, problems),
    adminToken: readAdminToken(env, problems),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

function parseDatabaseUrl(env: Env, problems: string[]): DatabaseConfig {
  const url = env.PLAUDER_DATABASE_URL || 'sqlite:./data/plauder.db';
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
    const poolSize = readInt(env, 'PLAUDER_DATABASE_POOL_SIZE', 10, 1, 1000, problems);
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

function readInt(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
  problems: string[],
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    problems.push(`${name}: expected an integer from ${min} to ${max}, got "${raw}"`);
    return fallback;
  }
  return value;
}

function readDuration(env: Env, name: string, fallback: string, problems: string[]): number {
  const raw = env[name] || fallback;
  const ms = parseDuration(raw);
  if (ms === undefined || ms <= 0) {
    problems.push(`${name}: expected a duration such as 30s, 15m, 24h or 30d, got "${raw}"`);
    return parseDuration(fallback) ?? 1;
  }
  return ms;
}

function readPlans(env: Env, problems: string[]): Plans {
  const result = parsePlans(env.PLAUDER_PLANS || 'standard=1000,plus=5000');
  if (!result.ok) {
    problems.push(`PLAUDER_PLANS: ${result.problem}`);
    return parsePlans('standard=1000,plus=5000').plans ?? new Map();
  }
  return result.plans;
}

function readTimeZone(env: Env, problems: string[]): string {
  const zone = env.PLAUDER_QUOTA_TIMEZONE || 'UTC';
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    problems.push(`PLAUDER_QUOTA_TIMEZONE: "${zone}" is not an IANA time zone`);
    return 'UTC';
  }
}

function readCoreSettings(env: Env, problems: string[]): CoreSettings {
  const kind = (env.PLAUDER_CORE || 'builtin') as CoreKind;
  switch (kind) {
    case 'builtin':
      return { kind, options: readBuiltinCoreConfig(env, problems) };
    case 'openai':
      return { kind, options: readOpenAiCoreConfig(env, problems) };
    case 'placeholder':
      return { kind };
    default:
      problems.push(`PLAUDER_CORE: expected one of ${CORE_KINDS.join(', ')}, got "${kind}"`);
      return { kind: 'placeholder' };
  }
}

function readLogLevel(env: Env, problems: string[]): string {
  const level = env.PLAUDER_LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(level)) {
    problems.push(`PLAUDER_LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got "${level}"`);
    return 'info';
  }
  return level;
}

function readSecret(env: Env, database: DatabaseConfig, problems: string[]): SecretSource {
  const raw = env.PLAUDER_SECRET;
  if (raw) {
    const value = Buffer.from(raw, 'base64');
    if (value.length !== 32) {
      problems.push('PLAUDER_SECRET: expected 32 random bytes in base64 (openssl rand -base64 32)');
    }
    return { kind: 'value', value };
  }
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

const ADMIN_TOKEN_MIN_LENGTH = 24;

function readAdminToken(env: Env, problems: string[]): string | undefined {
  const token = env.PLAUDER_ADMIN_TOKEN;
  if (token === undefined || token === '') return undefined;
  if (token.length < ADMIN_TOKEN_MIN_LENGTH || /\s/.test(token)) {
    problems.push(
      `PLAUDER_ADMIN_TOKEN: expected at least ${ADMIN_TOKEN_MIN_LENGTH} characters without spaces (openssl rand -base64 32)`,
    );
    return undefined;
  }
  return token;
}
