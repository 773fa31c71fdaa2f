import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import {
  DEFAULT_FALLBACKS,
  RASA_DEFAULTS,
  rasaWebhookUrl,
  readRasaCoreConfig,
} from '../../../src/core/rasa/rasa-config.js';

function read(env: Record<string, string | undefined>) {
  const problems: string[] = [];
  const options = readRasaCoreConfig(env, problems);
  return { options, problems };
}

describe('readRasaCoreConfig', () => {
  it('takes one bot for both languages from PLAUDER_RASA_URL and fills in the defaults', () => {
    const { options, problems } = read({ PLAUDER_RASA_URL: 'http://127.0.0.1:5005' });
    expect(problems).toEqual([]);
    expect(options).toEqual({
      webhooks: {
        de: 'http://127.0.0.1:5005/webhooks/rest/webhook',
        en: 'http://127.0.0.1:5005/webhooks/rest/webhook',
      },
      fallbacks: DEFAULT_FALLBACKS,
      ...RASA_DEFAULTS,
    });
    expect(options).toMatchObject({ timeoutMs: 10_000, maxRetries: 2, maxConnections: 64 });
    expect(Object.isFrozen(options)).toBe(true);
    expect(Object.isFrozen(options.webhooks)).toBe(true);
  });

  it('takes one bot per language from PLAUDER_RASA_URL_DE and PLAUDER_RASA_URL_EN', () => {
    const { options, problems } = read({
      PLAUDER_RASA_URL_DE: 'http://bot-de:5005',
      PLAUDER_RASA_URL_EN: 'https://bot-en.example/rasa/',
    });
    expect(problems).toEqual([]);
    expect(options.webhooks).toEqual({
      de: 'http://bot-de:5005/webhooks/rest/webhook',
      en: 'https://bot-en.example/rasa/webhooks/rest/webhook',
    });
  });

  it('reads the fallbacks and the shared upstream settings', () => {
    const { options, problems } = read({
      PLAUDER_RASA_URL: 'http://127.0.0.1:5005',
      PLAUDER_RASA_FALLBACK_DE: ' Wie bitte? ',
      PLAUDER_RASA_FALLBACK_EN: 'Pardon?',
      PLAUDER_RASA_TIMEOUT: '3s',
      PLAUDER_RASA_MAX_RETRIES: '0',
      PLAUDER_RASA_RETRY_BASE_DELAY: '100ms',
      PLAUDER_RASA_RETRY_MAX_DELAY: '2s',
      PLAUDER_RASA_MAX_CONNECTIONS: '4',
    });
    expect(problems).toEqual([]);
    expect(options).toMatchObject({
      fallbacks: { de: 'Wie bitte?', en: 'Pardon?' },
      timeoutMs: 3_000,
      maxRetries: 0,
      retryBaseDelayMs: 100,
      retryMaxDelayMs: 2_000,
      maxConnections: 4,
    });
  });

  it('reports that a URL is required when none is set', () => {
    const { problems } = read({ PLAUDER_RASA_URL: '  ' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /PLAUDER_RASA_URL .* or PLAUDER_RASA_URL_DE and PLAUDER_RASA_URL_EN/,
    );
    expect(problems[0]).toMatch(/required when PLAUDER_CORE=rasa/);
  });

  it.each([
    [{ PLAUDER_RASA_URL: 'http://a:5005', PLAUDER_RASA_URL_DE: 'http://b:5005' }],
    [{ PLAUDER_RASA_URL: 'http://a:5005', PLAUDER_RASA_URL_EN: 'http://b:5005' }],
    [
      {
        PLAUDER_RASA_URL: 'http://a:5005',
        PLAUDER_RASA_URL_DE: 'http://b:5005',
        PLAUDER_RASA_URL_EN: 'http://c:5005',
      },
    ],
  ])('refuses both forms mixed: %o', (env) => {
    const { problems } = read(env);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/either PLAUDER_RASA_URL .* not both/);
  });

  it.each([
    ['PLAUDER_RASA_URL_DE', 'PLAUDER_RASA_URL_EN'],
    ['PLAUDER_RASA_URL_EN', 'PLAUDER_RASA_URL_DE'],
  ])('refuses %s without %s', (set, missing) => {
    const { problems } = read({ [set]: 'http://bot:5005' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`${missing} is required with ${set}`);
  });

  it.each([
    ['not a url', /PLAUDER_RASA_URL is not a valid URL/],
    ['ftp://bot:5005', /PLAUDER_RASA_URL must use http or https/],
    ['http://user:pw@bot:5005', /PLAUDER_RASA_URL must not contain credentials/],
    ['http://bot:5005/#x', /PLAUDER_RASA_URL must not contain a #fragment/],
  ])('rejects PLAUDER_RASA_URL=%s', (url, message) => {
    const { problems } = read({ PLAUDER_RASA_URL: url });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
    expect(problems[0]).not.toContain('pw@');
  });

  it('reports every problem at once: each bad URL, the mix and bad settings', () => {
    const { problems } = read({
      PLAUDER_RASA_URL: 'ws://bot:5005',
      PLAUDER_RASA_URL_DE: 'nope',
      PLAUDER_RASA_TIMEOUT: 'soon',
      PLAUDER_RASA_MAX_RETRIES: '11',
      PLAUDER_RASA_MAX_CONNECTIONS: '0',
    });
    expect(problems).toHaveLength(6);
    const text = problems.join('\n');
    for (const name of [
      'PLAUDER_RASA_URL must use http',
      'PLAUDER_RASA_URL_DE is not a valid URL',
      'not both',
      'PLAUDER_RASA_TIMEOUT',
      'PLAUDER_RASA_MAX_RETRIES',
      'PLAUDER_RASA_MAX_CONNECTIONS',
    ]) {
      expect(text).toContain(name);
    }
  });

  it('is what loadConfig reads for PLAUDER_CORE=rasa, and its problems stop the start', () => {
    const config = loadConfig({ PLAUDER_CORE: 'rasa', PLAUDER_RASA_URL: 'http://127.0.0.1:5005' });
    expect(config.core.kind).toBe('rasa');
    let error: unknown;
    try {
      loadConfig({ PLAUDER_CORE: 'rasa', PLAUDER_RASA_URL_EN: 'x' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toHaveLength(2);
  });
});

describe('rasaWebhookUrl', () => {
  it.each([
    ['http://127.0.0.1:5005', 'http://127.0.0.1:5005/webhooks/rest/webhook'],
    ['http://127.0.0.1:5005/', 'http://127.0.0.1:5005/webhooks/rest/webhook'],
    ['https://h/bots/shop', 'https://h/bots/shop/webhooks/rest/webhook'],
    ['http://h:5005/webhooks/rest/webhook', 'http://h:5005/webhooks/rest/webhook'],
    ['http://h:5005/webhooks/myrest/webhook/', 'http://h:5005/webhooks/myrest/webhook'],
    ['http://h:5005/?token=t', 'http://h:5005/webhooks/rest/webhook?token=t'],
  ])('makes the webhook of %s', (url, expected) => {
    expect(rasaWebhookUrl(url)).toBe(expected);
  });
});
