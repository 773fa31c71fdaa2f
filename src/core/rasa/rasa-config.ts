/**
 * @module core/rasa/rasa-config
 * Reads the `PLAUDER_RASA_*` variables into frozen `RasaCoreOptions`. Either one bot for both
 * languages (`PLAUDER_RASA_URL`) or one per language (`PLAUDER_RASA_URL_DE` and `_EN`); every
 * invalid, missing or contradictory value becomes one entry in `problems` (never a throw), so
 * the config module can report all problems at once. Only called when `PLAUDER_CORE=rasa`.
 */

import {
  type Env,
  httpUrl,
  optional,
  readSettings,
  type Setting,
  text,
} from '../../util/settings.js';
import type { Language } from '../core-adapter.js';
import { type UpstreamSettings, upstreamSettings } from '../http/upstream-config.js';

/** Timeout, retries, backoff and pool size are the shared `UpstreamSettings`. */
export interface RasaCoreOptions extends UpstreamSettings {
  /** The REST channel's webhook per language; the same URL twice for one bot. */
  readonly webhooks: Readonly<Record<Language, string>>;
  /** The reply when the bot answers with nothing to show (`[]`). */
  readonly fallbacks: Readonly<Record<Language, string>>;
}

export const DEFAULT_FALLBACKS: Readonly<Record<Language, string>> = Object.freeze({
  de: 'Entschuldigung, darauf habe ich gerade keine Antwort. Magst du es anders formulieren?',
  en: "Sorry, I don't have an answer to that right now. Could you put it another way?",
});

/**
 * A bot answers within a second or two unless its custom actions call slow services; three
 * attempts of 10 s and the waits between them stay inside the default core deadline (60 s).
 */
export const RASA_DEFAULTS: UpstreamSettings = Object.freeze({
  timeoutMs: 10_000,
  maxRetries: 2,
  retryBaseDelayMs: 250,
  retryMaxDelayMs: 5_000,
  maxConnections: 64,
});

const EXAMPLE = 'e.g. http://127.0.0.1:5005';

const SETTINGS = {
  url: optional('PLAUDER_RASA_URL', httpUrl(EXAMPLE)),
  urlDe: optional('PLAUDER_RASA_URL_DE', httpUrl(EXAMPLE)),
  urlEn: optional('PLAUDER_RASA_URL_EN', httpUrl(EXAMPLE)),
  fallbackDe: optional('PLAUDER_RASA_FALLBACK_DE', text()),
  fallbackEn: optional('PLAUDER_RASA_FALLBACK_EN', text()),
  ...upstreamSettings('PLAUDER_RASA', RASA_DEFAULTS),
} satisfies Record<string, Setting<unknown>>;

export const RASA_SETTINGS: readonly Setting<unknown>[] = Object.values(SETTINGS);

/** Reads the adapter's options; pushes one problem per invalid or missing variable. */
export function readRasaCoreConfig(env: Env, problems: string[]): RasaCoreOptions {
  const { url, urlDe, urlEn, fallbackDe, fallbackEn, ...upstream } = readSettings(
    env,
    SETTINGS,
    problems,
  );
  // A URL that was given but is invalid is reported already; it still counts as given.
  const webhook = (href: string | undefined, name: string) =>
    href !== undefined ? rasaWebhookUrl(href) : env[name]?.trim() ? '' : undefined;
  const webhooks = readWebhooks(
    webhook(url, 'PLAUDER_RASA_URL'),
    webhook(urlDe, 'PLAUDER_RASA_URL_DE'),
    webhook(urlEn, 'PLAUDER_RASA_URL_EN'),
    problems,
  );
  return Object.freeze({
    webhooks: Object.freeze(webhooks),
    fallbacks: Object.freeze({
      de: fallbackDe ?? DEFAULT_FALLBACKS.de,
      en: fallbackEn ?? DEFAULT_FALLBACKS.en,
    }),
    ...upstream,
  });
}

function readWebhooks(
  one: string | undefined,
  de: string | undefined,
  en: string | undefined,
  problems: string[],
): Record<Language, string> {
  if (one !== undefined) {
    if (de !== undefined || en !== undefined) {
      problems.push(
        'Set either PLAUDER_RASA_URL (one bot for both languages) or PLAUDER_RASA_URL_DE and ' +
          'PLAUDER_RASA_URL_EN (one bot per language), not both.',
      );
    }
    return { de: one, en: one };
  }
  if (de === undefined && en === undefined) {
    problems.push(
      'PLAUDER_RASA_URL (one bot for both languages) or PLAUDER_RASA_URL_DE and ' +
        `PLAUDER_RASA_URL_EN (one bot per language) are required when PLAUDER_CORE=rasa (${EXAMPLE}).`,
    );
  } else if (de === undefined || en === undefined) {
    const [set, missing] = de === undefined ? ['EN', 'DE'] : ['DE', 'EN'];
    problems.push(
      `PLAUDER_RASA_URL_${missing} is required with PLAUDER_RASA_URL_${set} (one bot per ` +
        'language); for one bot for both languages set only PLAUDER_RASA_URL.',
    );
  }
  return { de: de ?? '', en: en ?? '' };
}

/**
 * The REST channel's webhook under a Rasa server's URL: `{url}/webhooks/rest/webhook`. A URL
 * whose path already ends with `/webhook` is taken as the webhook itself (a custom channel
 * that speaks the same protocol); a query string is kept.
 */
export function rasaWebhookUrl(serverUrl: string): string {
  const url = new URL(serverUrl);
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith('/webhook') ? path : `${path}/webhooks/rest/webhook`;
  return url.href;
}
