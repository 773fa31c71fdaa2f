/**
 * @module core/openai/openai-config
 * Reads the `PLAUDER_OPENAI_*` variables into frozen `OpenAiCoreOptions`. Every invalid or
 * missing value becomes one human-readable entry in `problems` (never a throw), so the config
 * module can report all problems at once. Only called when `PLAUDER_CORE=openai`.
 * Problem texts never contain the API key.
 */

import { z } from 'zod';
import {
  decimal,
  duration,
  type Env,
  httpUrl,
  integer,
  matching,
  optional,
  type Rule,
  readSettings,
  type Setting,
  setting,
  text,
} from '../../util/settings.js';
import type { Language } from '../core-adapter.js';
import { type UpstreamSettings, upstreamSettings } from '../http/upstream-config.js';

/** One model server: where, with which key, asking for which model. */
export interface OpenAiUpstream {
  /** Base URL ending before `/chat/completions`, e.g. `http://127.0.0.1:11434/v1`. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer`; `undefined` sends no Authorization header. */
  readonly apiKey: string | undefined;
  readonly model: string;
}

/**
 * Timeout, retries, backoff and pool size are the shared `UpstreamSettings` (the pool size
 * and the timeouts hold for each upstream). The first upstream's `baseUrl`, `apiKey` and
 * `model` are the options' own; `fallbacks` are the ones after it, in order.
 */
export interface OpenAiCoreOptions extends UpstreamSettings, OpenAiUpstream {
  /** The upstreams a turn moves on to when the ones before failed (docs/core.md). */
  readonly fallbacks: readonly OpenAiUpstream[];
  /** Consecutive failed attempts that open an upstream's circuit breaker. */
  readonly breakerFailures: number;
  /** How long an open breaker rests before it lets one probe through. */
  readonly breakerCooldownMs: number;
  readonly systemPrompts: Readonly<Record<Language, string>>;
  /** Omitted from the request when `undefined` (the server's default applies). */
  readonly temperature: number | undefined;
  /** Omitted from the request when `undefined`. */
  readonly maxTokens: number | undefined;
  /** Streamed replies: how long the upstream may take to send the first token. */
  readonly firstTokenTimeoutMs: number;
  /** Streamed replies: how long the upstream may pause between two tokens. */
  readonly tokenGapTimeoutMs: number;
}

export const DEFAULT_SYSTEM_PROMPTS: Readonly<Record<Language, string>> = Object.freeze({
  de:
    'Du bist der Assistent von plauder, einem Chat-Dienst. Antworte immer auf Deutsch, ' +
    'freundlich, hilfreich und kurz (höchstens ein paar Sätze). Wenn du etwas nicht weißt, ' +
    'sag das ehrlich, statt etwas zu erfinden.',
  en:
    'You are the assistant of plauder, a chat service. Always answer in English, in a ' +
    "friendly, helpful and brief way (a few sentences at most). If you don't know something, " +
    'say so honestly instead of making something up.',
});

const OPENAI_DEFAULTS: UpstreamSettings = Object.freeze({
  timeoutMs: 30_000,
  maxRetries: 2,
  retryBaseDelayMs: 250,
  retryMaxDelayMs: 5_000,
  maxConnections: 64,
});

/**
 * A comma-separated list of values of `rule`, each trimmed; an empty entry is a problem. A
 * problem names the entry by position, never quoting a value the rule does not quote.
 */
function listOf(rule: Rule<string>): Rule<readonly string[]> {
  return {
    schema: z.string().transform((value, context) => {
      const entries = value.split(',').map((entry) => entry.trim());
      const values: string[] = [];
      entries.forEach((entry, index) => {
        const where = entries.length > 1 ? ` (entry ${index + 1})` : '';
        const parsed = entry === '' ? undefined : rule.schema.safeParse(entry);
        if (parsed?.success) values.push(parsed.data);
        else {
          const message = parsed ? (parsed.error.issues[0]?.message ?? 'is invalid') : 'is empty';
          context.addIssue({ code: 'custom', message: `${message}${where}` });
        }
      });
      return values;
    }),
    expected: `${rule.expected}, or several separated by commas`,
    quote: rule.quote,
    ownMessages: true,
  };
}

/** Without its own messages, a rule's problem says what it expected (and quotes if it may). */
function explained(rule: Rule<string>): Rule<string> {
  return {
    ...rule,
    schema: z.string().superRefine((value, context) => {
      if (rule.schema.safeParse(value).success) return;
      const got = rule.quote ? `, got "${value.slice(0, 80)}"` : '';
      context.addIssue({ code: 'custom', message: `expects ${rule.expected}${got}` });
    }),
  };
}

const SETTINGS = {
  baseUrl: optional(
    'PLAUDER_OPENAI_BASE_URL',
    listOf(httpUrl('e.g. http://127.0.0.1:11434/v1', '; use PLAUDER_OPENAI_API_KEY')),
  ),
  // It becomes an HTTP header value; the problem text must not quote the key.
  apiKey: optional(
    'PLAUDER_OPENAI_API_KEY',
    listOf(
      explained(
        matching('only visible ASCII characters, no spaces', (key) => /^[\x21-\x7e]+$/.test(key), {
          quote: false,
        }),
      ),
    ),
  ),
  model: optional('PLAUDER_OPENAI_MODEL', listOf(explained(text()))),
  systemPromptDe: optional('PLAUDER_OPENAI_SYSTEM_PROMPT_DE', text()),
  systemPromptEn: optional('PLAUDER_OPENAI_SYSTEM_PROMPT_EN', text()),
  temperature: optional('PLAUDER_OPENAI_TEMPERATURE', decimal(0, 2)),
  maxTokens: optional('PLAUDER_OPENAI_MAX_TOKENS', integer(1, 1_000_000)),
  ...upstreamSettings('PLAUDER_OPENAI', OPENAI_DEFAULTS),
  firstTokenTimeoutMs: setting('PLAUDER_OPENAI_FIRST_TOKEN_TIMEOUT', duration(), '30s'),
  tokenGapTimeoutMs: setting('PLAUDER_OPENAI_TOKEN_GAP_TIMEOUT', duration(), '15s'),
  // A very large count keeps the breaker closed: every failure then reaches the upstream.
  breakerFailures: setting('PLAUDER_OPENAI_BREAKER_FAILURES', integer(1, 1_000_000), '5'),
  breakerCooldownMs: setting('PLAUDER_OPENAI_BREAKER_COOLDOWN', duration(), '30s'),
} satisfies Record<string, Setting<unknown>>;

export const OPENAI_SETTINGS: readonly Setting<unknown>[] = Object.values(SETTINGS);

/** Reads the adapter's options; pushes one problem per invalid or missing variable. */
export function readOpenAiCoreConfig(env: Env, problems: string[]): OpenAiCoreOptions {
  const { baseUrl, apiKey, model, systemPromptDe, systemPromptEn, ...rest } = readSettings(
    env,
    SETTINGS,
    problems,
  );
  if (baseUrl === undefined && !env.PLAUDER_OPENAI_BASE_URL?.trim()) {
    problems.push(
      'PLAUDER_OPENAI_BASE_URL is required when PLAUDER_CORE=openai (e.g. http://127.0.0.1:11434/v1).',
    );
  }
  if (model === undefined && !env.PLAUDER_OPENAI_MODEL?.trim()) {
    problems.push('PLAUDER_OPENAI_MODEL is required when PLAUDER_CORE=openai (e.g. llama3.2).');
  }
  const urls = baseUrl ?? [];
  // An invalid list still says how many upstreams were meant, so every problem is listed.
  const count = baseUrl?.length ?? (env.PLAUDER_OPENAI_BASE_URL?.trim() || '').split(',').length;
  const keys = perUpstream('PLAUDER_OPENAI_API_KEY', apiKey, count, problems);
  const models = perUpstream('PLAUDER_OPENAI_MODEL', model, count, problems);
  const upstreams = urls.map((url, index) =>
    Object.freeze({ baseUrl: url, apiKey: keys(index), model: models(index) ?? '' }),
  );
  return Object.freeze({
    ...rest,
    apiKey: upstreams[0]?.apiKey,
    baseUrl: upstreams[0]?.baseUrl ?? '',
    model: upstreams[0]?.model ?? '',
    fallbacks: Object.freeze(upstreams.slice(1)),
    systemPrompts: Object.freeze({
      de: systemPromptDe ?? DEFAULT_SYSTEM_PROMPTS.de,
      en: systemPromptEn ?? DEFAULT_SYSTEM_PROMPTS.en,
    }),
  });
}

/**
 * A setting given once for all upstreams or once per upstream: the value for the upstream at
 * a position. Another count is a problem (the values are not quoted: one may be a key).
 */
function perUpstream(
  name: string,
  values: readonly string[] | undefined,
  upstreams: number,
  problems: string[],
): (index: number) => string | undefined {
  if (values === undefined) return () => undefined;
  if (values.length === 1 || values.length === upstreams || upstreams === 0) {
    return (index) => (values.length === 1 ? values[0] : values[index]);
  }
  problems.push(
    `${name} lists ${values.length} values for ${upstreams} base URLs in PLAUDER_OPENAI_BASE_URL: give one for all, or one per URL in the same order.`,
  );
  return (index) => values[Math.min(index, values.length - 1)];
}
