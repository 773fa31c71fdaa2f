/**
 * @module core/http/upstream-config
 * The settings every HTTP-upstream core shares (timeout, retries, backoff, pool size) and
 * the checks of an upstream URL, for `PLAUDER_<CORE>_*` variables, declared with the same
 * rules as the rest of the configuration (`util/settings.ts`). Every invalid value becomes
 * one human-readable entry in `problems` (never a throw), so the config module can report
 * all problems at once.
 */

import {
  decimal,
  duration,
  durationText,
  type Env,
  httpUrl,
  integer,
  optional,
  readSettings,
  type Setting,
  setting,
} from '../../util/settings.js';

export type { Env };

/** How an adapter talks to its upstream; see src/core/http/http-upstream.ts. */
export interface UpstreamSettings {
  /** Time limit of one attempt (connect + request + full response). */
  readonly timeoutMs: number;
  /** Attempts after the first one; 0 disables retries. */
  readonly maxRetries: number;
  /** Base of the full-jitter exponential backoff. */
  readonly retryBaseDelayMs: number;
  /** Upper bound of any wait between attempts, including one asked for by `Retry-After`. */
  readonly retryMaxDelayMs: number;
  /** Upper bound of concurrent (and pooled keep-alive) connections to the upstream. */
  readonly maxConnections: number;
}

/** A variable's trimmed value; empty and blank values count as unset. */
export type EnvReader = (name: string) => string | undefined;

export function envReader(env: Env): EnvReader {
  return (name) => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
}

/**
 * `<prefix>_TIMEOUT`, `_MAX_RETRIES`, `_RETRY_BASE_DELAY`, `_RETRY_MAX_DELAY` and
 * `_MAX_CONNECTIONS`, each with its default from `defaults`. Delays are timers: at most
 * 2^31-1 ms.
 */
export function upstreamSettings(prefix: string, defaults: UpstreamSettings) {
  return {
    timeoutMs: setting(`${prefix}_TIMEOUT`, duration(), durationText(defaults.timeoutMs)),
    maxRetries: setting(`${prefix}_MAX_RETRIES`, integer(0, 10), String(defaults.maxRetries)),
    retryBaseDelayMs: setting(
      `${prefix}_RETRY_BASE_DELAY`,
      duration({ min: 0 }),
      durationText(defaults.retryBaseDelayMs),
    ),
    retryMaxDelayMs: setting(
      `${prefix}_RETRY_MAX_DELAY`,
      duration({ min: 0 }),
      durationText(defaults.retryMaxDelayMs),
    ),
    maxConnections: setting(
      `${prefix}_MAX_CONNECTIONS`,
      integer(1, 10_000),
      String(defaults.maxConnections),
    ),
  } satisfies Record<keyof UpstreamSettings, Setting<unknown>>;
}

/** Reads the settings `upstreamSettings(prefix, defaults)` declares. */
export function readUpstreamSettings(
  prefix: string,
  read: EnvReader,
  defaults: UpstreamSettings,
  problems: string[],
): UpstreamSettings {
  const names = Object.values(upstreamSettings(prefix, defaults)).map((s) => s.name);
  const env = Object.fromEntries(names.map((name) => [name, read(name)]));
  return readSettings(env, upstreamSettings(prefix, defaults), problems);
}

export interface UrlRule {
  /** Shown in the problem text, e.g. `e.g. http://127.0.0.1:11434/v1`. */
  readonly example: string;
  /** Where credentials belong instead, e.g. `; use PLAUDER_OPENAI_API_KEY`. */
  readonly credentialsHint?: string;
}

/**
 * An http(s) URL without credentials or fragment, as `URL.href`; `undefined` (and one
 * problem) otherwise. The problem never quotes the value: it may hold a password.
 */
export function readHttpUrl(
  name: string,
  value: string,
  rule: UrlRule,
  problems: string[],
): string | undefined {
  const spec = optional(name, httpUrl(rule.example, rule.credentialsHint));
  const before = problems.length;
  const { url } = readSettings({ [name]: value }, { url: spec }, problems);
  return problems.length > before ? undefined : url;
}

export interface NumberRule {
  readonly min: number;
  readonly max: number;
  readonly integer: boolean;
}

/** A number within `rule`, or undefined (with one problem when `value` was given). */
export function readNumber(
  name: string,
  value: string | undefined,
  rule: NumberRule,
  problems: string[],
): number | undefined {
  if (value === undefined) return undefined;
  const check = rule.integer ? integer(rule.min, rule.max) : decimal(rule.min, rule.max);
  const before = problems.length;
  const { number } = readSettings({ [name]: value }, { number: optional(name, check) }, problems);
  return problems.length > before ? undefined : number;
}
