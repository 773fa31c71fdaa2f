/**
 * @module core/openai/openai-config
 * Reads the `PLAUDER_OPENAI_*` variables into frozen `OpenAiCoreOptions`. Every invalid or
 * missing value becomes one human-readable entry in `problems` (never a throw), so the config
 * module can report all problems at once. Only called when `PLAUDER_CORE=openai`.
 * Problem texts never contain the API key.
 */

import { parseDuration } from '../../util/duration.js';
import type { Language } from '../core-adapter.js';

export interface OpenAiCoreOptions {
  /** Base URL ending before `/chat/completions`, e.g. `http://127.0.0.1:11434/v1`. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer`; `undefined` sends no Authorization header. */
  readonly apiKey: string | undefined;
  readonly model: string;
  readonly systemPrompts: Readonly<Record<Language, string>>;
  /** Omitted from the request when `undefined` (the server's default applies). */
  readonly temperature: number | undefined;
  /** Omitted from the request when `undefined`. */
  readonly maxTokens: number | undefined;
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

type Env = Readonly<Record<string, string | undefined>>;

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

export const OPENAI_DEFAULTS = Object.freeze({
  timeoutMs: 30_000,
  maxRetries: 2,
  retryBaseDelayMs: 250,
  retryMaxDelayMs: 5_000,
  maxConnections: 64,
});

/** Reads the adapter's options; pushes one problem per invalid or missing variable. */
export function readOpenAiCoreConfig(env: Env, problems: string[]): OpenAiCoreOptions {
  const read = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === '' ? undefined : value;
  };
  const model = read('PLAUDER_OPENAI_MODEL');
  if (model === undefined) {
    problems.push('PLAUDER_OPENAI_MODEL is required when PLAUDER_CORE=openai (e.g. llama3.2).');
  }
  const num = (name: string, rule: NumberRule) => readNumber(name, read(name), rule, problems);
  const ms = (name: string, fallback: number, min: number) =>
    readDurationMs(name, read(name), fallback, min, problems);
  return Object.freeze({
    baseUrl: readBaseUrl(read('PLAUDER_OPENAI_BASE_URL'), problems),
    apiKey: readApiKey(read('PLAUDER_OPENAI_API_KEY'), problems),
    model: model ?? '',
    systemPrompts: Object.freeze({
      de: read('PLAUDER_OPENAI_SYSTEM_PROMPT_DE') ?? DEFAULT_SYSTEM_PROMPTS.de,
      en: read('PLAUDER_OPENAI_SYSTEM_PROMPT_EN') ?? DEFAULT_SYSTEM_PROMPTS.en,
    }),
    temperature: num('PLAUDER_OPENAI_TEMPERATURE', { min: 0, max: 2, integer: false }),
    maxTokens: num('PLAUDER_OPENAI_MAX_TOKENS', { min: 1, max: 1_000_000, integer: true }),
    timeoutMs: ms('PLAUDER_OPENAI_TIMEOUT', OPENAI_DEFAULTS.timeoutMs, 1),
    maxRetries:
      num('PLAUDER_OPENAI_MAX_RETRIES', { min: 0, max: 10, integer: true }) ??
      OPENAI_DEFAULTS.maxRetries,
    retryBaseDelayMs: ms('PLAUDER_OPENAI_RETRY_BASE_DELAY', OPENAI_DEFAULTS.retryBaseDelayMs, 0),
    retryMaxDelayMs: ms('PLAUDER_OPENAI_RETRY_MAX_DELAY', OPENAI_DEFAULTS.retryMaxDelayMs, 0),
    maxConnections:
      num('PLAUDER_OPENAI_MAX_CONNECTIONS', { min: 1, max: 10_000, integer: true }) ??
      OPENAI_DEFAULTS.maxConnections,
  });
}

function readBaseUrl(value: string | undefined, problems: string[]): string {
  const example = 'e.g. http://127.0.0.1:11434/v1';
  if (value === undefined) {
    problems.push(`PLAUDER_OPENAI_BASE_URL is required when PLAUDER_CORE=openai (${example}).`);
    return '';
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problems.push(`PLAUDER_OPENAI_BASE_URL is not a valid URL (${example}).`);
    return '';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    problems.push(`PLAUDER_OPENAI_BASE_URL must use http or https, not ${url.protocol}`);
    return '';
  }
  // Credentials in the URL would end up in logs and error messages; the key has its own variable.
  if (url.username !== '' || url.password !== '') {
    problems.push(
      'PLAUDER_OPENAI_BASE_URL must not contain credentials; use PLAUDER_OPENAI_API_KEY.',
    );
    return '';
  }
  if (url.hash !== '') {
    problems.push('PLAUDER_OPENAI_BASE_URL must not contain a #fragment.');
    return '';
  }
  return url.href;
}

function readApiKey(value: string | undefined, problems: string[]): string | undefined {
  // It becomes an HTTP header value; the problem text must not quote the key.
  if (value !== undefined && !/^[\x21-\x7e]+$/.test(value)) {
    problems.push('PLAUDER_OPENAI_API_KEY may contain only visible ASCII characters, no spaces.');
    return undefined;
  }
  return value;
}

interface NumberRule {
  readonly min: number;
  readonly max: number;
  readonly integer: boolean;
}

function readNumber(
  name: string,
  value: string | undefined,
  rule: NumberRule,
  problems: string[],
): number | undefined {
  if (value === undefined) return undefined;
  // Number('') and Number('0x10') are accepted by JS; a plain decimal is what operators mean.
  const parsed = /^[+-]?(\d+(\.\d+)?|\.\d+)$/.test(value) ? Number(value) : Number.NaN;
  const kind = rule.integer ? 'an integer' : 'a number';
  if (
    !Number.isFinite(parsed) ||
    (rule.integer && !Number.isInteger(parsed)) ||
    parsed < rule.min ||
    parsed > rule.max
  ) {
    problems.push(`${name} must be ${kind} from ${rule.min} to ${rule.max}, got "${value}".`);
    return undefined;
  }
  return parsed;
}

function readDurationMs(
  name: string,
  value: string | undefined,
  fallback: number,
  min: number,
  problems: string[],
): number {
  if (value === undefined) return fallback;
  const ms = parseDuration(value);
  // setTimeout cannot wait longer than 2^31-1 ms; a longer value would fire at once.
  if (ms === undefined || ms < min || ms > 2_147_483_647) {
    const floor = min > 0 ? ` of at least ${min}ms` : '';
    problems.push(`${name} must be a duration${floor} such as 500ms, 30s or 2m, got "${value}".`);
    return fallback;
  }
  return ms;
}
