/**
 * @module config/webhook-config
 * The events receiver (docs/contract.md, "Events"): `PLAUDER_WEBHOOK_URL` and `PLAUDER_WEBHOOK_SECRET`
 * (Standard Webhooks `whsec_<base64>`), both or neither, and the sender's timing.
 */
import {
  duration,
  type Env,
  matching,
  optional,
  readSettings,
  type Setting,
  setting,
} from '../util/settings.js';

export interface WebhookConfig {
  /** http(s) URL that receives every event as a signed POST. */
  readonly url: string;
  /** `whsec_<base64>`: signs every delivery; never logged, never shown. */
  readonly secret: string;
  /** How often each instance looks for events that are due. */
  readonly pollIntervalMs: number;
  /** One delivery attempt's deadline. */
  readonly timeoutMs: number;
  /** The first retry's delay; each further one doubles it (with jitter), up to an hour. */
  readonly retryBaseMs: number;
  /** How long an event is retried: the first failed attempt after this gives up. */
  readonly retryWindowMs: number;
}

/** Standard Webhooks secrets are 24 to 64 random bytes. */
const SECRET_BYTES = { min: 24, max: 64 };
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;
/** Fewer than 24 h of retries would lose events across a receiver's long weekend outage. */
const MIN_RETRY_WINDOW_MS = 24 * 3_600_000;

const SETTINGS = {
  url: optional('PLAUDER_WEBHOOK_URL', matching('an http:// or https:// URL', isHttpUrl)),
  secret: optional(
    'PLAUDER_WEBHOOK_SECRET',
    matching(
      `whsec_ and ${SECRET_BYTES.min}-${SECRET_BYTES.max} bytes in base64 (make one with: plauder webhooks secret)`,
      isWebhookSecret,
      { quote: false },
    ),
  ),
  pollIntervalMs: setting('PLAUDER_WEBHOOK_POLL_INTERVAL', duration(), '1s'),
  timeoutMs: setting('PLAUDER_WEBHOOK_TIMEOUT', duration(), '10s'),
  retryBaseMs: setting('PLAUDER_WEBHOOK_RETRY_BASE', duration(), '5s'),
  // The window is compared with the event's age, never waited for with a timer.
  retryWindowMs: setting(
    'PLAUDER_WEBHOOK_RETRY_WINDOW',
    duration({ min: MIN_RETRY_WINDOW_MS, max: 365 * 86_400_000 }),
    '25h',
  ),
} satisfies Record<string, Setting<unknown>>;

export const WEBHOOK_SETTINGS: readonly Setting<unknown>[] = Object.values(SETTINGS);

export function readWebhookConfig(env: Env, problems: string[]): WebhookConfig | undefined {
  const { url, secret, ...durations } = readSettings(env, SETTINGS, problems);
  const given = (name: string) => Boolean(env[name]?.trim());
  const urlGiven = given('PLAUDER_WEBHOOK_URL');
  const secretGiven = given('PLAUDER_WEBHOOK_SECRET');
  if (!urlGiven && !secretGiven) return undefined;
  if (!urlGiven) {
    problems.push(
      'PLAUDER_WEBHOOK_URL: required with PLAUDER_WEBHOOK_SECRET (where to send events)',
    );
  }
  if (!secretGiven) {
    problems.push(
      'PLAUDER_WEBHOOK_SECRET: required with PLAUDER_WEBHOOK_URL (make one with: plauder webhooks secret)',
    );
  }
  if (url === undefined || secret === undefined) return undefined;
  return { url, secret, ...durations };
}

function isWebhookSecret(secret: string): boolean {
  const base64 = SECRET.exec(secret)?.[1];
  if (base64 === undefined || base64.length % 4 !== 0) return false;
  const bytes = Buffer.from(base64, 'base64').length;
  return bytes >= SECRET_BYTES.min && bytes <= SECRET_BYTES.max;
}

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const url = new URL(text);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}
