import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { describePlan, parsePlans } from '../../src/plans/plans.js';

describe('PLAUDER_PLANS', () => {
  it('reads monthly and per-minute limits', () => {
    const result = parsePlans('standard=1000/month+60/minute,plus=5000/month+300/minute');
    expect(result.ok && [...result.plans]).toEqual([
      ['standard', { monthly: 1000, perMinute: 60 }],
      ['plus', { monthly: 5000, perMinute: 300 }],
    ]);
  });

  it('keeps the old syntax: a bare number is a month with no per-minute limit', () => {
    const result = parsePlans('standard=1000,plus=5000/month,fast=60/minute+10');
    expect(result.ok && [...result.plans]).toEqual([
      ['standard', { monthly: 1000, perMinute: undefined }],
      ['plus', { monthly: 5000, perMinute: undefined }],
      ['fast', { monthly: 10, perMinute: 60 }],
    ]);
  });

  it("reads a plan's own cap on concurrent turns", () => {
    const result = parsePlans('standard=1000+4/concurrent,plus=5000/month+60/minute+32/concurrent');
    expect(result.ok && [...result.plans]).toEqual([
      ['standard', { monthly: 1000, perMinute: undefined, concurrent: 4 }],
      ['plus', { monthly: 5000, perMinute: 60, concurrent: 32 }],
    ]);
    const wrong = parsePlans('a=10+0/concurrent,b=10+2/concurrent+3/concurrent');
    expect(wrong.ok ? [] : wrong.problems).toEqual([
      'plan "a": the limit of concurrent turns must be a positive integer',
      'plan "b": more than one limit of concurrent turns',
    ]);
    expect(describePlan({ monthly: 10, perMinute: 6, concurrent: 2 })).toBe(
      '10/month+6/minute+2/concurrent',
    );
  });

  it('reads token budgets and the default output cap beside the request limits', () => {
    const result = parsePlans(
      'standard=1000/month+2000000tokens/month+40000tokens/minute+1024tokens/answer,mini=10+500tokens/minute,plain=1000',
    );
    expect(result.ok && [...result.plans]).toEqual([
      [
        'standard',
        {
          monthly: 1000,
          perMinute: undefined,
          tokens: { monthly: 2_000_000, perMinute: 40_000, answer: 1024 },
        },
      ],
      // Without `Ntokens/answer` answers are capped at 4096 tokens.
      [
        'mini',
        {
          monthly: 10,
          perMinute: undefined,
          tokens: { monthly: undefined, perMinute: 500, answer: 4096 },
        },
      ],
      ['plain', { monthly: 1000, perMinute: undefined }],
    ]);
    const wrong = parsePlans('a=10+5tokens,b=10+1tokens/month+2tokens/month,c=10+3/answer');
    expect(wrong.ok ? [] : wrong.problems).toEqual([
      expect.stringContaining('plan "a": "5tokens" is not a limit'),
      'plan "b": more than one limit of tokens per month',
      expect.stringContaining('plan "c": "3/answer" is not a limit'),
    ]);
    const plan = result.ok ? result.plans.get('standard') : undefined;
    expect(plan && describePlan(plan)).toBe(
      '1000/month+2000000tokens/month+40000tokens/minute+1024tokens/answer',
    );
  });

  it('reports every problem at once', () => {
    const result = parsePlans(
      'a=10/hour,b=60/minute,c=0,d=5/month+6/month,Upper=1,e=1,e=2,f=12/minute+x',
    );
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.problems).toEqual([
      'plan "a": "10/hour" is not a limit such as 1000, 1000/month, 60/minute, 16/concurrent, 256/queue, 2000000tokens/month, 40000tokens/minute or 1024tokens/answer',
      'plan "b" needs a monthly limit (e.g. b=1000/month+60/minute)',
      'plan "c": the limit per month must be a positive integer',
      'plan "d": more than one limit per month',
      '"Upper=1" is not name=limit (lower-case name, e.g. standard=1000/month)',
      'plan "e" is listed twice',
      'plan "f": "x" is not a limit such as 1000, 1000/month, 60/minute, 16/concurrent, 256/queue, 2000000tokens/month, 40000tokens/minute or 1024tokens/answer',
    ]);
  });

  it('stops the start with every problem of the plans and the webhook settings', () => {
    let error: unknown;
    try {
      loadConfig({
        PLAUDER_DATABASE_URL: 'sqlite::memory:',
        PLAUDER_PLANS: 'standard=1000/month+0/minute,plus',
        PLAUDER_WEBHOOK_URL: 'not a url',
        PLAUDER_WEBHOOK_SECRET: 'whsec_tooshort',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'PLAUDER_PLANS: plan "standard": the limit per minute must be a positive integer',
      'PLAUDER_PLANS: "plus" is not name=limit (lower-case name, e.g. standard=1000/month)',
      'PLAUDER_WEBHOOK_URL: expected an http:// or https:// URL, got "not a url"',
      'PLAUDER_WEBHOOK_SECRET: expected whsec_ and 24-64 bytes in base64 (make one with: plauder webhooks secret)',
    ]);
  });

  it('writes a plan back as it is configured', () => {
    expect(describePlan({ monthly: 1000, perMinute: 60 })).toBe('1000/month+60/minute');
    expect(describePlan({ monthly: 1000, perMinute: undefined })).toBe('1000/month');
  });
});

describe('webhook settings', () => {
  const base = { PLAUDER_DATABASE_URL: 'sqlite::memory:' };
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

  it('are off without URL and secret, and need both', () => {
    expect(loadConfig(base).webhook).toBeUndefined();
    expect(() => loadConfig({ ...base, PLAUDER_WEBHOOK_URL: 'https://hooks.example/in' })).toThrow(
      /PLAUDER_WEBHOOK_SECRET: required with PLAUDER_WEBHOOK_URL/,
    );
    expect(() => loadConfig({ ...base, PLAUDER_WEBHOOK_SECRET: secret })).toThrow(
      /PLAUDER_WEBHOOK_URL: required with PLAUDER_WEBHOOK_SECRET/,
    );
  });

  it('take a whsec_ secret and an http(s) URL, with the sender timing', () => {
    const config = loadConfig({
      ...base,
      PLAUDER_WEBHOOK_URL: 'https://hooks.example/in',
      PLAUDER_WEBHOOK_SECRET: secret,
      PLAUDER_WEBHOOK_POLL_INTERVAL: '200ms',
    });
    expect(config.webhook).toEqual({
      url: 'https://hooks.example/in',
      secret,
      pollIntervalMs: 200,
      timeoutMs: 10_000,
      retryBaseMs: 5_000,
      retryWindowMs: 25 * 3_600_000,
    });
    expect(() =>
      loadConfig({
        ...base,
        PLAUDER_WEBHOOK_URL: 'https://hooks.example/in',
        PLAUDER_WEBHOOK_SECRET: secret,
        PLAUDER_WEBHOOK_RETRY_WINDOW: '2h',
      }),
    ).toThrow(/PLAUDER_WEBHOOK_RETRY_WINDOW: expected a duration .*, from 1d to/);
  });
});
