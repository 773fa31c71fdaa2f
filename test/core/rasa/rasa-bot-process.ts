/**
 * Starts `test/fixtures/rasa-bot.mjs` (a bot speaking Rasa's REST channel) as a real child
 * process on loopback and drives its control endpoints; builds rasa cores against it.
 */

import { fileURLToPath } from 'node:url';
import type { CoreRequest, Language } from '../../../src/core/core-adapter.js';
import type { RasaCoreOptions } from '../../../src/core/rasa/create-rasa-core.js';
import { DEFAULT_FALLBACKS, rasaWebhookUrl } from '../../../src/core/rasa/rasa-config.js';
import { startFixtureProcess } from '../../helpers/fixture-process.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/rasa-bot.mjs', import.meta.url));

export interface BotMessage {
  text?: unknown;
  image?: unknown;
  buttons?: unknown;
  attachment?: unknown;
  custom?: unknown;
}

export interface BotStep {
  messages?: readonly BotMessage[];
  status?: number;
  body?: unknown;
  raw?: string;
  contentType?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  hang?: boolean;
  close?: boolean;
}

export interface BotRequest {
  method: string;
  path: string;
  headers: Record<string, string | undefined>;
  body: { sender?: unknown; message?: unknown; metadata?: unknown } | null;
  rawBody: string;
  /** The client closed the request before the bot answered it. */
  closedEarly: boolean;
}

export interface RasaBot {
  /** The Rasa server's URL, as an operator would configure it. */
  readonly url: string;
  script(...steps: BotStep[]): Promise<void>;
  requests(): Promise<BotRequest[]>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** `name` starts the bot's default replies (`<name> echo: <message>`). */
export async function startRasaBot(name = ''): Promise<RasaBot> {
  const fixture = await startFixtureProcess(FIXTURE, ['0', name]);
  return {
    url: fixture.origin,
    async script(...steps) {
      await fixture.control('POST', '/__control', { steps });
    },
    async requests() {
      const answer = (await fixture.control('GET', '/__requests')) as { requests: BotRequest[] };
      return answer.requests;
    },
    async reset() {
      await fixture.control('POST', '/__reset');
    },
    stop: () => fixture.end('SIGTERM'),
  };
}

/** Options for tests: one bot for both languages, short timeouts and fast retries. */
export function testOptions(
  url: string | Readonly<Record<Language, string>>,
  overrides: Partial<RasaCoreOptions> = {},
): RasaCoreOptions {
  const urls = typeof url === 'string' ? { de: url, en: url } : url;
  return {
    webhooks: { de: rasaWebhookUrl(urls.de), en: rasaWebhookUrl(urls.en) },
    fallbacks: DEFAULT_FALLBACKS,
    timeoutMs: 2_000,
    maxRetries: 2,
    retryBaseDelayMs: 10,
    retryMaxDelayMs: 50,
    maxConnections: 8,
    ...overrides,
  };
}

export function ask(
  message: string,
  fields: Partial<Omit<CoreRequest, 'message'>> = {},
): CoreRequest {
  return { message, language: 'de', history: [], signal: new AbortController().signal, ...fields };
}

/** The rejection of `promise`, which must reject. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (reason: unknown) => reason,
  );
}

/** Polls `check` until it holds or `timeoutMs` passed; returns its last result. */
export async function until(check: () => Promise<boolean>, timeoutMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return check();
}
