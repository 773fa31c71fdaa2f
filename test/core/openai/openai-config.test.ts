import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SYSTEM_PROMPTS,
  readOpenAiCoreConfig,
} from '../../../src/core/openai/openai-config.js';

const MINIMAL = {
  PLAUDER_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
  PLAUDER_OPENAI_MODEL: 'llama3.2',
};

function read(env: Record<string, string | undefined>) {
  const problems: string[] = [];
  const options = readOpenAiCoreConfig(env, problems);
  return { options, problems };
}

describe('readOpenAiCoreConfig', () => {
  it('needs only a base URL and a model, and fills in the defaults', () => {
    const { options, problems } = read(MINIMAL);
    expect(problems).toEqual([]);
    expect(options).toEqual({
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: undefined,
      model: 'llama3.2',
      systemPrompts: DEFAULT_SYSTEM_PROMPTS,
      temperature: undefined,
      maxTokens: undefined,
      timeoutMs: 30_000,
      maxRetries: 2,
      retryBaseDelayMs: 250,
      retryMaxDelayMs: 5_000,
      maxConnections: 64,
      firstTokenTimeoutMs: 30_000,
      tokenGapTimeoutMs: 15_000,
      fallbacks: [],
      breakerFailures: 5,
      breakerCooldownMs: 30_000,
    });
    expect(Object.isFrozen(options)).toBe(true);
  });

  it('reads several base URLs with one model and key for all, in order', () => {
    const { options, problems } = read({
      PLAUDER_OPENAI_BASE_URL: 'http://a.example/v1, http://b.example:8000/v1',
      PLAUDER_OPENAI_MODEL: 'llama3.2',
      PLAUDER_OPENAI_API_KEY: 'sk-one',
      PLAUDER_OPENAI_BREAKER_FAILURES: '3',
      PLAUDER_OPENAI_BREAKER_COOLDOWN: '10s',
    });
    expect(problems).toEqual([]);
    expect(options).toMatchObject({
      baseUrl: 'http://a.example/v1',
      apiKey: 'sk-one',
      model: 'llama3.2',
      fallbacks: [{ baseUrl: 'http://b.example:8000/v1', apiKey: 'sk-one', model: 'llama3.2' }],
      breakerFailures: 3,
      breakerCooldownMs: 10_000,
    });
  });

  it('pairs a list of keys and models with the base URLs by position', () => {
    const { options, problems } = read({
      PLAUDER_OPENAI_BASE_URL: 'http://a.example/v1,http://b.example/v1',
      PLAUDER_OPENAI_MODEL: 'big,small',
      PLAUDER_OPENAI_API_KEY: 'sk-a,sk-b',
    });
    expect(problems).toEqual([]);
    expect(options).toMatchObject({ apiKey: 'sk-a', model: 'big' });
    expect(options.fallbacks).toEqual([
      { baseUrl: 'http://b.example/v1', apiKey: 'sk-b', model: 'small' },
    ]);
  });

  it('lists every problem of the upstream lists at once, without quoting a key', () => {
    const { problems } = read({
      PLAUDER_OPENAI_BASE_URL: 'http://a.example/v1,ftp://b.example,http://c.example/v1',
      PLAUDER_OPENAI_MODEL: 'one,two',
      PLAUDER_OPENAI_API_KEY: 'sk-secret-a,sk secret b,sk-secret-c',
      PLAUDER_OPENAI_BREAKER_FAILURES: '0',
    });
    const text = problems.join('\n');
    expect(problems).toHaveLength(4);
    expect(text).toMatch(/PLAUDER_OPENAI_BASE_URL must use http or https \(entry 2\)/);
    expect(text).toMatch(/PLAUDER_OPENAI_API_KEY expects only visible ASCII.*\(entry 2\)/);
    expect(text).toMatch(/PLAUDER_OPENAI_MODEL lists 2 values for 3 base URLs/);
    expect(text).toContain('PLAUDER_OPENAI_BREAKER_FAILURES');
    expect(text).not.toContain('secret');
  });

  it('default system prompts ask for German and English and name plauder', () => {
    expect(DEFAULT_SYSTEM_PROMPTS.de).toMatch(/Deutsch/);
    expect(DEFAULT_SYSTEM_PROMPTS.en).toMatch(/English/);
    expect(DEFAULT_SYSTEM_PROMPTS.de).toMatch(/plauder/);
    expect(DEFAULT_SYSTEM_PROMPTS.en).toMatch(/plauder/);
  });

  it('reads every variable', () => {
    const { options, problems } = read({
      ...MINIMAL,
      PLAUDER_OPENAI_API_KEY: ' sk-abc ',
      PLAUDER_OPENAI_SYSTEM_PROMPT_DE: 'Sei knapp.',
      PLAUDER_OPENAI_SYSTEM_PROMPT_EN: 'Be brief.',
      PLAUDER_OPENAI_TEMPERATURE: '0.7',
      PLAUDER_OPENAI_MAX_TOKENS: '512',
      PLAUDER_OPENAI_TIMEOUT: '45s',
      PLAUDER_OPENAI_MAX_RETRIES: '0',
      PLAUDER_OPENAI_RETRY_BASE_DELAY: '100ms',
      PLAUDER_OPENAI_RETRY_MAX_DELAY: '2s',
      PLAUDER_OPENAI_MAX_CONNECTIONS: '16',
      PLAUDER_OPENAI_FIRST_TOKEN_TIMEOUT: '10s',
      PLAUDER_OPENAI_TOKEN_GAP_TIMEOUT: '2500ms',
    });
    expect(problems).toEqual([]);
    expect(options).toMatchObject({
      apiKey: 'sk-abc',
      systemPrompts: { de: 'Sei knapp.', en: 'Be brief.' },
      temperature: 0.7,
      maxTokens: 512,
      timeoutMs: 45_000,
      maxRetries: 0,
      retryBaseDelayMs: 100,
      retryMaxDelayMs: 2_000,
      maxConnections: 16,
      firstTokenTimeoutMs: 10_000,
      tokenGapTimeoutMs: 2_500,
    });
  });

  it('reports a stream timeout that is not a duration', () => {
    const { problems } = read({ ...MINIMAL, PLAUDER_OPENAI_TOKEN_GAP_TIMEOUT: 'soon' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/PLAUDER_OPENAI_TOKEN_GAP_TIMEOUT: expected a duration/);
  });

  it('treats empty values as unset', () => {
    const { options, problems } = read({
      ...MINIMAL,
      PLAUDER_OPENAI_API_KEY: '',
      PLAUDER_OPENAI_TEMPERATURE: '  ',
    });
    expect(problems).toEqual([]);
    expect(options.apiKey).toBeUndefined();
    expect(options.temperature).toBeUndefined();
  });

  it('reports a missing base URL and model together', () => {
    const { problems } = read({});
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).toMatch(/PLAUDER_OPENAI_BASE_URL is required/);
    expect(problems.join('\n')).toMatch(/PLAUDER_OPENAI_MODEL is required/);
  });

  it.each([
    ['not a url', /not a valid URL/],
    ['ftp://example.com/v1', /http or https/],
    ['http://user:pw@example.com/v1', /must not contain credentials/],
    ['http://example.com/v1#x', /fragment/],
  ])('rejects the base URL %s', (url, message) => {
    const { problems } = read({ ...MINIMAL, PLAUDER_OPENAI_BASE_URL: url });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it('never repeats URL credentials in the problem text', () => {
    const { problems } = read({ ...MINIMAL, PLAUDER_OPENAI_BASE_URL: 'http://u:s3cr3t@h/v1' });
    expect(problems.join('\n')).not.toContain('s3cr3t');
  });

  it.each([
    ['PLAUDER_OPENAI_TEMPERATURE', '2.5'],
    ['PLAUDER_OPENAI_TEMPERATURE', '-0.1'],
    ['PLAUDER_OPENAI_TEMPERATURE', 'warm'],
    ['PLAUDER_OPENAI_MAX_TOKENS', '0'],
    ['PLAUDER_OPENAI_MAX_TOKENS', '1.5'],
    ['PLAUDER_OPENAI_MAX_TOKENS', '0x10'],
    ['PLAUDER_OPENAI_MAX_RETRIES', '-1'],
    ['PLAUDER_OPENAI_MAX_RETRIES', '11'],
    ['PLAUDER_OPENAI_MAX_RETRIES', 'two'],
    ['PLAUDER_OPENAI_MAX_CONNECTIONS', '0'],
    ['PLAUDER_OPENAI_TIMEOUT', 'soon'],
    ['PLAUDER_OPENAI_TIMEOUT', '0s'],
    ['PLAUDER_OPENAI_TIMEOUT', '30d'],
    ['PLAUDER_OPENAI_RETRY_BASE_DELAY', '-1s'],
    ['PLAUDER_OPENAI_RETRY_MAX_DELAY', 'x'],
  ])('reports %s=%s as one problem naming the variable', (name, value) => {
    const { problems } = read({ ...MINIMAL, [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(name);
    expect(problems[0]).toContain(value);
  });

  it('reports every problem at once and never throws', () => {
    const { problems } = read({
      PLAUDER_OPENAI_TEMPERATURE: '9',
      PLAUDER_OPENAI_MAX_TOKENS: '-3',
      PLAUDER_OPENAI_TIMEOUT: 'never',
    });
    expect(problems).toHaveLength(5);
  });

  it('rejects an API key that cannot be an HTTP header value, without quoting it', () => {
    const { problems } = read({ ...MINIMAL, PLAUDER_OPENAI_API_KEY: 'sk-abc def\u00e4' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('PLAUDER_OPENAI_API_KEY');
    expect(problems[0]).not.toContain('sk-abc');
  });

  it('never puts the API key into a problem', () => {
    const { problems } = read({
      PLAUDER_OPENAI_API_KEY: 'sk-very-secret',
      PLAUDER_OPENAI_TIMEOUT: '?',
    });
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.join('\n')).not.toContain('sk-very-secret');
  });
});
