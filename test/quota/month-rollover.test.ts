import { afterEach, describe, expect, it } from 'vitest';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer | undefined;
afterEach(() => server?.close());

async function setup(timeZone: string, start: number) {
  const clock = { now: start };
  server = await startTestServer({
    clock: () => clock.now,
    env: {
      PLAUDER_CORE: 'placeholder',
      PLAUDER_PLANS: 'standard=1000,tiny=2',
      PLAUDER_QUOTA_TIMEZONE: timeZone,
    },
  });
  const { key, id } = await server.createKey({ plan: 'tiny' });
  const used = (month: string) => (server as TestServer).services.usage.used(id, month);
  return { clock, key, used, s: server };
}

const cases = [
  {
    name: 'UTC, November → December',
    zone: 'UTC',
    lastMs: Date.UTC(2026, 10, 30, 23, 59, 59, 999),
    months: ['2026-11', '2026-12'],
    nextReset: Date.UTC(2027, 0, 1),
  },
  {
    name: 'UTC, December → January',
    zone: 'UTC',
    lastMs: Date.UTC(2026, 11, 31, 23, 59, 59, 999),
    months: ['2026-12', '2027-01'],
    nextReset: Date.UTC(2027, 1, 1),
  },
  {
    name: 'Europe/Berlin, November → December',
    zone: 'Europe/Berlin',
    lastMs: Date.UTC(2026, 10, 30, 22, 59, 59, 999),
    months: ['2026-11', '2026-12'],
    nextReset: Date.UTC(2026, 11, 31, 23),
  },
  {
    name: 'Europe/Berlin, December → January',
    zone: 'Europe/Berlin',
    lastMs: Date.UTC(2026, 11, 31, 22, 59, 59, 999),
    months: ['2026-12', '2027-01'],
    nextReset: Date.UTC(2027, 0, 31, 23),
  },
];

describe.each(cases)(
  'month rollover at 23:59:59.999 → 00:00, $name',
  ({ zone, lastMs, months, nextReset }) => {
    it('refuses at the limit until the last millisecond and resets at local midnight', async () => {
      const { clock, key, used } = await setup(zone, lastMs - 60_000);
      const [oldMonth, newMonth] = months as [string, string];

      expect(
        (await chat({ url: (server as TestServer).url }, key, { message: 'eins' })).status,
      ).toBe(200);
      expect(
        (await chat({ url: (server as TestServer).url }, key, { message: 'zwei' })).status,
      ).toBe(200);

      clock.now = lastMs;
      const refused = await chat({ url: (server as TestServer).url }, key, { message: 'drei' });
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.headers.get('x-ratelimit-reset')).toBe(String((lastMs + 1) / 1000));
      expect(refused.headers.get('ratelimit')).toBe('"monthly";r=0;t=1');

      clock.now = lastMs + 1;
      const fresh = await chat({ url: (server as TestServer).url }, key, { message: 'vier' });
      expect(fresh.status).toBe(200);
      expect(fresh.json.reply).toEqual(expect.any(String));
      expect(fresh.headers.get('x-ratelimit-remaining')).toBe('1');
      expect(fresh.headers.get('x-ratelimit-reset')).toBe(String(nextReset / 1000));

      expect(await used(oldMonth)).toBe(2);
      expect(await used(newMonth)).toBe(1);

      const usage = await http(`${(server as TestServer).url}/api/usage`, { key });
      expect(usage.json).toEqual({
        plan: 'tiny',
        active: true,
        limit: 2,
        used: 1,
        remaining: 1,
        resetsAt: new Date(nextReset).toISOString(),
      });
    });
  },
);

it('charges a request to the month of the service clock in the quota time zone, not UTC', async () => {
  // 2026-11-30T23:30Z is already 1 December in Berlin.
  const { key, used } = await setup('Europe/Berlin', Date.UTC(2026, 10, 30, 23, 30));
  expect((await chat({ url: (server as TestServer).url }, key, { message: 'Hallo' })).status).toBe(
    200,
  );
  expect(await used('2026-12')).toBe(1);
  expect(await used('2026-11')).toBe(0);
});
