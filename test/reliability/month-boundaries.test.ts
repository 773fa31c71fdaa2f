/**
 * Month boundaries on the real server process, its clock moved by libfaketime to a few
 * seconds before a month ends: the limit holds until the last second, the next month
 * starts at local midnight in the quota time zone with a fresh count, the headers and
 * /api/usage name the right reset, and a request in flight across midnight is charged to
 * the month it was admitted in. (test/quota/month-rollover.test.ts does the same
 * arithmetic in process with an injected clock; here it is the process's own clock.)
 */
import { afterAll, describe, it } from 'vitest';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startServerAt } from './support/fake-clock.js';
import type { RawResponse } from './support/http-client.js';
import { createKeyWithCli, once } from './support/server-process.js';

const DAY = 86_400;
/**
 * Fake time before the boundary when a test begins: the server's clock is set to it once
 * the server is up (a slow start on a busy machine takes nothing from it).
 */
const LEAD_MS = 9_000;

const databases: TestDatabase[] = [];
const stops: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  await Promise.all(stops.map((stop) => stop()));
  await Promise.all(databases.map((database) => database.drop()));
});

async function setUp(zone: string, extraEnv: Record<string, string> = {}) {
  const database = await createTestDatabase();
  databases.push(database);
  const env = {
    ...database.env,
    PLAUDER_CORE: 'placeholder',
    PLAUDER_PLANS: 'standard=1000,plus=5000,tiny=2',
    PLAUDER_QUOTA_TIMEZONE: zone,
    ...extraEnv,
  };
  const { id, key } = await createKeyWithCli(env, 'tiny');
  return { env, id, key };
}

async function usedIn(env: Record<string, string>, id: string, month: string): Promise<number> {
  const res = await runCliInProcess(['usage', '--month', month, '--json'], env);
  const report = JSON.parse(res.stdout) as { keys: Array<{ id: string; used: number }> };
  return report.keys.find((k) => k.id === id)?.used ?? Number.NaN;
}

function seconds(res: RawResponse, name: string): number {
  const header = String(res.headers[name] ?? '');
  return Number(/;t=(\d+)$/.exec(header)?.[1] ?? header);
}

const cases = [
  {
    name: 'UTC, 31-day December into January',
    zone: 'UTC',
    boundary: Date.UTC(2027, 0, 1),
    months: ['2026-12', '2027-01'],
    windows: [31 * DAY, 31 * DAY],
    nextReset: Date.UTC(2027, 1, 1),
  },
  {
    name: 'UTC, 29 February 2028 into March',
    zone: 'UTC',
    boundary: Date.UTC(2028, 2, 1),
    months: ['2028-02', '2028-03'],
    windows: [29 * DAY, 31 * DAY],
    nextReset: Date.UTC(2028, 3, 1),
  },
  {
    // Summer time starts on 28 March 2027: March has 31 days minus one hour.
    name: 'Europe/Berlin, March (DST starts) into April',
    zone: 'Europe/Berlin',
    boundary: Date.UTC(2027, 2, 31, 22),
    months: ['2027-03', '2027-04'],
    windows: [31 * DAY - 3600, 30 * DAY],
    nextReset: Date.UTC(2027, 3, 30, 22),
  },
  {
    // Summer time ends on 31 October 2027: October has 31 days plus one hour.
    name: 'Europe/Berlin, October (DST ends) into November',
    zone: 'Europe/Berlin',
    boundary: Date.UTC(2027, 9, 31, 23),
    months: ['2027-10', '2027-11'],
    windows: [31 * DAY + 3600, 30 * DAY],
    nextReset: Date.UTC(2027, 10, 30, 23),
  },
];

describe.concurrent('month boundaries on the server process clock (libfaketime)', () => {
  it.for(cases)(
    '$name: the limit holds to the last second, local midnight starts a fresh month',
    { timeout: 90_000 },
    async ({ zone, boundary, months, windows, nextReset }, { expect }) => {
      const { env, id, key } = await setUp(zone);
      const clock = await startServerAt(boundary - LEAD_MS, env);
      stops.push(() => clock.server.stop());
      const url = clock.server.url;
      const [before, after] = months as [string, string];
      const [windowBefore, windowAfter] = windows as [number, number];
      const chat = (message: string) => once(url, 'POST', '/api/chat', key, { message });

      // The process really runs on the fake clock (Date is in whole seconds).
      const health = await once(url, 'GET', '/healthz');
      const serverDate = Date.parse(String(health.headers.date));
      expect(Math.abs(serverDate - clock.now())).toBeLessThan(2_000);
      expect(clock.now()).toBeLessThan(boundary - 2_000);

      expect((await chat('eins')).status).toBe(200);
      expect((await chat('zwei')).status).toBe(200);
      const refused = await chat('drei');
      const secondsLeft = (boundary - clock.now()) / 1000;
      expect(refused.status).toBe(429);
      expect(refused.headers['x-ratelimit-reset']).toBe(String(boundary / 1000));
      expect(refused.headers['ratelimit-policy']).toBe(`"monthly";q=2;w=${windowBefore}`);
      expect(Math.abs(Number(refused.headers['retry-after']) - secondsLeft)).toBeLessThanOrEqual(2);
      expect(Math.abs(seconds(refused, 'ratelimit') - secondsLeft)).toBeLessThanOrEqual(2);
      const usageBefore = await once(url, 'GET', '/api/usage', key);
      expect(usageBefore.json).toMatchObject({ used: 2, remaining: 0 });
      expect(usageBefore.json.resetsAt).toBe(new Date(boundary).toISOString());

      await clock.until(boundary + 300);
      const fresh = await chat('vier');
      expect(fresh.status).toBe(200);
      expect(fresh.json).toEqual({ reply: expect.any(String) });
      expect(fresh.headers['x-ratelimit-remaining']).toBe('1');
      expect(fresh.headers['x-ratelimit-reset']).toBe(String(nextReset / 1000));
      expect(fresh.headers['ratelimit-policy']).toBe(`"monthly";q=2;w=${windowAfter}`);
      const usageAfter = await once(url, 'GET', '/api/usage', key);
      expect(usageAfter.json).toMatchObject({ used: 1, remaining: 1 });
      expect(usageAfter.json.resetsAt).toBe(new Date(nextReset).toISOString());

      // The counters per month, as the operator sees them.
      expect(await usedIn(env, id, before)).toBe(2);
      expect(await usedIn(env, id, after)).toBe(1);
      console.log(
        `[month ${zone}] ${before} → ${after} at ${new Date(boundary).toISOString()}: 2 replies then 429 ` +
          `(Retry-After ${refused.headers['retry-after']} s, w=${windowBefore}), fresh month w=${windowAfter}, ` +
          `resetsAt ${usageAfter.json.resetsAt}`,
      );
    },
  );

  test('charges a request in flight across midnight to the month it was admitted in', async ({
    expect,
    upstream,
  }) => {
    const zone = 'Europe/Berlin';
    const boundary = Date.UTC(2026, 10, 30, 23); // 1 December 2026, 00:00 in Berlin
    const { env, id, key } = await setUp(
      zone,
      openAiEnv(upstream, { PLAUDER_OPENAI_TIMEOUT: '10s' }, { retries: 'shipped' }),
    );
    const clock = await startServerAt(boundary - LEAD_MS, env);
    stops.push(() => clock.server.stop());
    const url = clock.server.url;

    // Admitted 2.5 s before midnight, answered 2.5 s after it.
    await upstream.script({ delayMs: 5_000, content: 'spät, aber da' });
    await clock.until(boundary - 2_500);
    const admittedAt = clock.now();
    const late = await once(url, 'POST', '/api/chat', key, { message: 'kurz vor Mitternacht' });
    const answeredAt = clock.now();
    expect(admittedAt).toBeLessThan(boundary);
    expect(answeredAt).toBeGreaterThan(boundary);
    expect(late.json).toEqual({ reply: 'spät, aber da' });
    expect(late.headers['x-ratelimit-reset']).toBe(String(boundary / 1000));
    expect(late.headers['x-ratelimit-remaining']).toBe('1');
    expect(late.headers['ratelimit-policy']).toBe(`"monthly";q=2;w=${30 * DAY}`);

    const december = await once(url, 'GET', '/api/usage', key);
    expect(december.json).toMatchObject({ used: 0, remaining: 2 });
    expect(december.json.resetsAt).toBe(new Date(Date.UTC(2026, 11, 31, 23)).toISOString());
    expect(await usedIn(env, id, '2026-11')).toBe(1);
    expect(await usedIn(env, id, '2026-12')).toBe(0);
    console.log(
      `[month in flight] admitted ${new Date(admittedAt).toISOString()}, answered ${new Date(answeredAt).toISOString()}: ` +
        `charged to 2026-11 (Europe/Berlin); December starts with used 0`,
    );
  }, 90_000);
});
