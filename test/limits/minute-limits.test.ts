/**
 * Per-minute limits (docs/contract.md, "Burst limits") on the in-process server with a controlled clock: the
 * limit is exact under 60+ concurrent requests, refusals are 429 rate_limited with the
 * seconds until the minute frees up, they count against nothing, the monthly quota is
 * decided first, a failed core gives the request back to both limits, and the limits show
 * in the headers, /api/usage and the admin API.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CoreAdapter } from '../../src/core/core-adapter.js';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';

const PLANS = 'standard=1000,burst=1000/month+60/minute,tiny=3/month+2/minute';
const ADMIN_TOKEN = 'admin-token-for-the-limits-tests-0123456789';
/** 2026-11-10 12:34:00.000 UTC: a minute's first millisecond. */
const MINUTE_START = Date.UTC(2026, 10, 10, 12, 34);

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function controlledClock(start: number) {
  let now = start;
  return {
    now: () => now,
    set: (instant: number) => {
      now = instant;
    },
  };
}

async function start(options: { clock: () => number; core?: CoreAdapter }) {
  server = await startTestServer({
    clock: options.clock,
    env: { PLAUDER_CORE: 'placeholder', PLAUDER_PLANS: PLANS, PLAUDER_ADMIN_TOKEN: ADMIN_TOKEN },
    ...(options.core ? { core: options.core } : {}),
  });
  return server;
}

const isReply = (res: { status: number; json: any }) =>
  res.status === 200 && typeof res.json?.reply === 'string' && res.json.error === undefined;
const isRateLimited = (res: { status: number; json: any }) =>
  res.status === 429 && res.json?.error?.code === 'rate_limited';

describe('per-minute limits', () => {
  it('answers exactly 60 of 90 concurrent requests in one minute and refuses 30 with rate_limited', async () => {
    const clock = controlledClock(MINUTE_START + 15_000);
    const s = await start({ clock: clock.now });
    const { id, key } = await s.createKey({ plan: 'burst' });

    const results = await Promise.all(
      Array.from({ length: 90 }, (_, i) => chat(s, key, { message: `Frage ${i}` })),
    );

    expect(results.filter(isReply)).toHaveLength(60);
    const refused = results.filter(isRateLimited);
    expect(refused).toHaveLength(30);
    for (const res of refused) {
      // 45 s until 12:35:00.
      expect(res.headers.get('retry-after')).toBe('45');
      expect(res.headers.get('ratelimit')).toMatch(/, "minute";r=0;t=45$/);
      expect(res.json.error.message).toMatch(/per-minute/);
    }
    // Refusals are not counted against the month.
    expect(await s.services.usage.used(id, '2026-11')).toBe(60);
  });

  it('frees up at the next minute: the last millisecond still refuses, the first of the next admits', async () => {
    const clock = controlledClock(MINUTE_START + 59_000);
    const s = await start({ clock: clock.now });
    const { key } = await s.createKey({ plan: 'tiny' });

    expect((await chat(s, key, { message: 'eins' })).status).toBe(200);
    expect((await chat(s, key, { message: 'zwei' })).status).toBe(200);
    clock.set(MINUTE_START + 59_999);
    const refused = await chat(s, key, { message: 'drei' });
    expect(isRateLimited(refused)).toBe(true);
    expect(refused.headers.get('retry-after')).toBe('1');

    clock.set(MINUTE_START + 60_000);
    const next = await chat(s, key, { message: 'drei' });
    expect(isReply(next)).toBe(true);
    expect(next.headers.get('ratelimit-policy')).toBe(
      `"monthly";q=3;w=${30 * 86_400}, "minute";q=2;w=60`,
    );
    expect(next.headers.get('ratelimit')).toMatch(/^"monthly";r=0;t=\d+, "minute";r=1;t=60$/);
    // The X-RateLimit-* headers keep describing the month.
    expect(next.headers.get('x-ratelimit-limit')).toBe('3');
    expect(next.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(next.headers.get('x-ratelimit-reset')).toBe(String(Date.UTC(2026, 11, 1) / 1000));
  });

  it('decides the month before the minute, and neither refusal consumes the other limit', async () => {
    const clock = controlledClock(MINUTE_START);
    const s = await start({ clock: clock.now });
    const { id, key } = await s.createKey({ plan: 'tiny' });

    // Minute full (2 of 2), month 2 of 3: rate_limited, the month stays at 2.
    await chat(s, key, { message: 'a' });
    await chat(s, key, { message: 'b' });
    expect(isRateLimited(await chat(s, key, { message: 'c' }))).toBe(true);
    expect(await s.services.usage.used(id, '2026-11')).toBe(2);

    // Next minute: one left this month; then the month is used up.
    clock.set(MINUTE_START + 60_000);
    expect((await chat(s, key, { message: 'c' })).status).toBe(200);
    const monthRefusal = await chat(s, key, { message: 'd' });
    expect(monthRefusal.status).toBe(429);
    expect(monthRefusal.json.error.code).toBe('quota_exceeded');
    // The month's refusal took no unit of the minute: one of two is still free.
    expect(monthRefusal.headers.get('ratelimit')).toMatch(/, "minute";r=1;t=60$/);
    expect(Number(monthRefusal.headers.get('retry-after'))).toBeGreaterThan(60);

    // Month and minute both full: the month is reported (row 3 before row 3a).
    clock.set(MINUTE_START + 120_000);
    const both = await chat(s, key, { message: 'e' });
    expect(both.json.error.code).toBe('quota_exceeded');
  });

  it('answers rate_limited before judging the body when the minute is used up (row 3a before row 4)', async () => {
    const clock = controlledClock(MINUTE_START);
    const s = await start({ clock: clock.now });
    const { key } = await s.createKey({ plan: 'tiny' });
    await chat(s, key, { message: 'a' });
    await chat(s, key, { message: 'b' });

    const res = await http(`${s.url}/api/chat`, {
      key,
      raw: 'not json',
      headers: { 'content-type': 'application/json' },
    });
    expect(isRateLimited(res)).toBe(true);
    expect(res.headers.get('retry-after')).toBe('60');
  });

  it('gives a failed core request back to the minute and to the month', async () => {
    const clock = controlledClock(MINUTE_START + 30_000);
    let fail = true;
    const core: CoreAdapter = {
      name: 'flaky',
      reply: async () => {
        if (fail) throw new Error('core down');
        return 'ok';
      },
    };
    const s = await start({ clock: clock.now, core });
    const { id, key } = await s.createKey({ plan: 'tiny' });

    for (let i = 0; i < 4; i++) expect((await chat(s, key, { message: 'x' })).status).toBe(500);
    expect(await s.services.usage.used(id, '2026-11')).toBe(0);
    fail = false;
    expect((await chat(s, key, { message: 'x' })).status).toBe(200);
    expect((await chat(s, key, { message: 'y' })).status).toBe(200);
    expect(isRateLimited(await chat(s, key, { message: 'z' }))).toBe(true);
  });

  it('keeps plans without a per-minute limit as they were: one monthly policy, no minute', async () => {
    const s = await start({ clock: controlledClock(MINUTE_START).now });
    const { key } = await s.createKey({ plan: 'standard' });
    const res = await chat(s, key, { message: 'Hallo' });
    expect(res.headers.get('ratelimit-policy')).toBe(`"monthly";q=1000;w=${30 * 86_400}`);
    expect(res.headers.get('ratelimit')).toMatch(/^"monthly";r=999;t=\d+$/);
    const usage = await http(`${s.url}/api/usage`, { key });
    expect(usage.json.perMinute).toBeUndefined();
  });

  it('shows the minute in /api/usage and the admin API', async () => {
    const clock = controlledClock(MINUTE_START + 20_000);
    const s = await start({ clock: clock.now });
    const { id, key } = await s.createKey({ plan: 'burst' });
    for (let i = 0; i < 3; i++) await chat(s, key, { message: `m${i}` });

    const usage = await http(`${s.url}/api/usage`, { key });
    expect(usage.json).toEqual({
      plan: 'burst',
      active: true,
      limit: 1000,
      used: 3,
      remaining: 997,
      resetsAt: '2026-12-01T00:00:00.000Z',
      perMinute: { limit: 60, used: 3, remaining: 57, resetsAt: '2026-11-10T12:35:00.000Z' },
    });
    expect(usage.headers.get('ratelimit')).toMatch(/, "minute";r=57;t=40$/);

    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const view = await http(`${s.url}/admin/v1/keys/${id}`, { headers: admin });
    expect(view.json.usage).toEqual({
      month: '2026-11',
      used: 3,
      limit: 1000,
      remaining: 997,
      perMinute: { limit: 60, used: 3, remaining: 57 },
      tokens: null,
    });
    const list = await http(`${s.url}/admin/v1/keys`, { headers: admin });
    expect(list.json.keys[0].usage.perMinute).toEqual({ limit: 60, used: 3, remaining: 57 });
    const plans = await http(`${s.url}/admin/v1/plans`, { headers: admin });
    expect(plans.json.plans).toEqual([
      { name: 'standard', limit: 1000, perMinute: null, tokens: null },
      { name: 'burst', limit: 1000, perMinute: 60, tokens: null },
      { name: 'tiny', limit: 3, perMinute: 2, tokens: null },
    ]);

    // A minute later the minute's count starts again at 0.
    clock.set(MINUTE_START + 60_000);
    const later = await http(`${s.url}/admin/v1/keys/${id}`, { headers: admin });
    expect(later.json.usage.perMinute).toEqual({ limit: 60, used: 0, remaining: 60 });
  });
});
