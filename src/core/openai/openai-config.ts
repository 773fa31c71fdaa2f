/**
 * @module core/openai/openai-config
 * Reads the `PLAUDER_OPENAI_*` variables into frozen `OpenAiCoreOptions`. Every invalid or
 * missing value becomes one human-readable entry in `problems` (never a throw), so the config
 * module can report all problems at once. Only called when `PLAUDER_CORE=openai`.
 * Problem texts never contain the API key.
 */

import {
  decimal,
  duration,
  type Env,
  httpUrl,
  integer,
  matching,
  optional,
  readSettings,
  type Setting,
  setting,
  text,
} from '../../util/settings.js';
import type { Language } from '../core-adapter.js';
import { type UpstreamSettings, upstreamSettings } from '../http/upstream-config.js';

/** Timeout, retries, backoff and pool size are the shared `UpstreamSettings`. */
export interface OpenAiCoreOptions extends UpstreamSettings {
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

const SETTINGS = {
  baseUrl: optional(
    'PLAUDER_OPENAI_BASE_URL',
    httpUrl('e.g. http://127.0.0.1:11434/v1', '; use PLAUDER_OPENAI_API_KEY'),
  ),
  // It becomes an HTTP header value; the problem text must not quote the key.
  apiKey: optional(
    'PLAUDER_OPENAI_API_KEY',
    matching('only visible ASCII characters, no spaces', (key) => /^[\x21-\x7e]+$/.test(key), {
      quote: false,
    }),
  ),
  model: optional('PLAUDER_OPENAI_MODEL', text()),
  systemPromptDe: optional('PLAUDER_OPENAI_SYSTEM_PROMPT_DE', text()),
  systemPromptEn: optional('PLAUDER_OPENAI_SYSTEM_PROMPT_EN', text()),
  temperature: optional('PLAUDER_OPENAI_TEMPERATURE', decimal(0, 2)),
  maxTokens: optional('PLAUDER_OPENAI_MAX_TOKENS', integer(1, 1_000_000)),
  ...upstreamSettings('PLAUDER_OPENAI', OPENAI_DEFAULTS),
  firstTokenTimeoutMs: setting('PLAUDER_OPENAI_FIRST_TOKEN_TIMEOUT', duration(), '30s'),
  tokenGapTimeoutMs: setting('PLAUDER_OPENAI_TOKEN_GAP_TIMEOUT', duration(), '15s'),
} satisfies Record<string, Setting<unknown>>;

export const OPENAI_SETTINGS: readonly Setting<unknown>[] = Object.values(SETTINGS);

/** Reads the adapter's options; pushes one problem per invalid or missing variable. */
export function readOpenAiCoreConfig(env: Env, problems: string[]): OpenAiCoreOptions {
  const { baseUrl, model, systemPromptDe, systemPromptEn, ...rest } = readSettings(
    env,
    SETTINGS,
    problems,
  );
  if (baseUrl === undefined && !env.PLAUDER_OPENAI_BASE_URL?.trim()) {
    problems.push(
      'PLAUDER_OPENAI_BASE_URL is required when PLAUDER_CORE=openai (e.g. http://127.0.0.1:11434/v1).',
    );
  }
  if (model === undefined) {
    problems.push('PLAUDER_OPENAI_MODEL is required when PLAUDER_CORE=openai (e.g. llama3.2).');
  }
  return Object.freeze({
    ...rest,
    baseUrl: baseUrl ?? '',
    model: model ?? '',
    systemPrompts: Object.freeze({
      de: systemPromptDe ?? DEFAULT_SYSTEM_PROMPTS.de,
      en: systemPromptEn ?? DEFAULT_SYSTEM_PROMPTS.en,
    }),
  });
}
