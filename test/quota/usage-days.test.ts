/**
 * Requests per day (`usage_days`), on the database of the project (SQLite or PostgreSQL):
 * counted with the month's reservation and refunded with it, so the days of a month always
 * add up to its count, under concurrency, across midnight and across a month's end in a
 * time zone that is not UTC. The clock is the test's; nothing sleeps.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { CoreError } from '../../src/core/core-adapter.js';
import { admin, startAdminServer } from '../admin/admin-client.js';
import { createGatedCore } from '../helpers/gated-core.js';
import { chat, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** 2026-11-30T23:00 in Berlin (UTC+1): the last hour of November there. */
const BERLIN_LAST_HOUR = Date.UTC(2026, 10, 30, 22);

const sum = (days: readonly { used: number }[]) => days.reduce((n, d) => n + d.used, 0);

describe('requests per day', () => {
  it('counts exactly the admitted requests on their day when 300 race for a limit of 200', async () => {
    const clock = { now: Date.UTC(2026, 10, 12, 9) };
    server = await startTestServer({
      clock: () => clock.now,
      env: { PLAUDER_CORE: 'placeholder', PLAUDER_PLANS: 'standard=1000,small=200' },
    });
    const { id, key } = await server.createKey({ plan: 'small' });
    const { services } = server;

    const statuses = await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        chat(server as TestServer, key, { message: `Frage ${i}` }).then((r) => r.status),
      ),
    );

    expect(statuses.filter((s) => s === 200)).toHaveLength(200);
    expect(statuses.filter((s) => s === 429)).toHaveLength(100);
    expect(await services.usage.used(id, '2026-11')).toBe(200);
    expect(await services.usage.days(id, '2026-11-01', '2026-11-30')).toEqual([
      { day: '2026-11-12', used: 200 },
    ]);
  });

  it('counts the day on the path that records quota events too, and never a refused request', async () => {
    server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
    const { id } = await server.createKey();
    const { usage } = server.services;
    const reserve = (day: string) =>
      usage.reserve({
        keyId: id,
        month: '2026-11',
        day,
        limit: 5,
        minute: 1,
        minuteLimit: undefined,
        // 1 and 4 take the read-modify-write path; the others the single statement.
        watch: [1, 4],
        record: () => () => {},
      });

    const asked = [
      '2026-11-01',
      '2026-11-01',
      '2026-11-02',
      '2026-11-02',
      '2026-11-02',
      '2026-11-02',
      '2026-11-03',
    ];
    const outcomes = await Promise.all(asked.map(reserve));

    expect(outcomes.filter((o) => o.admitted)).toHaveLength(5);
    expect(await usage.used(id, '2026-11')).toBe(5);
    // Exactly the admitted requests are on their days; the refused ones left nothing.
    const expected = new Map<string, number>();
    outcomes.forEach((o, i) => {
      const day = asked[i] as string;
      if (o.admitted) expected.set(day, (expected.get(day) ?? 0) + 1);
    });
    expect(await usage.days(id, '2026-11-01', '2026-11-30')).toEqual(
      [...expected].map(([day, used]) => ({ day, used })),
    );
  });

  it('gives the day back with the month when the core fails, and only what was counted', async () => {
    let fail = false;
    server = await startTestServer({
      clock: () => Date.UTC(2026, 10, 12, 9),
      core: {
        name: 'sometimes',
        reply: async () => {
          if (fail) throw new CoreError('core_unavailable', 'down on purpose');
          return 'Hallo!';
        },
      },
    });
    const { id, key } = await server.createKey();
    for (let i = 0; i < 3; i++)
      expect((await chat(server, key, { message: 'Hallo' })).status).toBe(200);
    fail = true;
    for (let i = 0; i < 2; i++)
      expect((await chat(server, key, { message: 'Hallo' })).status).toBe(500);

    expect(await server.services.usage.used(id, '2026-11')).toBe(3);
    expect(await server.services.usage.days(id, '2026-11-12', '2026-11-12')).toEqual([
      { day: '2026-11-12', used: 3 },
    ]);
    // A refund with nothing counted changes neither the month nor the day.
    await server.services.usage.refund(id, '2026-10', -1, '2026-10-31');
    expect(await server.services.usage.days(id, '2026-10-01', '2026-10-31')).toEqual([]);
  });

  it('refunds the day a request was counted on, also when the core fails after midnight', async () => {
    const clock = { now: Date.UTC(2026, 10, 12, 22, 59, 59) }; // 23:59:59 in Berlin
    const core = createGatedCore();
    server = await startTestServer({
      clock: () => clock.now,
      core,
      env: { PLAUDER_QUOTA_TIMEZONE: 'Europe/Berlin' },
    });
    const { id, key } = await server.createKey();
    const late = chat(server, key, { message: 'spät' });
    await core.waitForCalls(1);
    clock.now = Date.UTC(2026, 10, 12, 23, 0, 1); // 00:00:01 on the 13th in Berlin
    const early = chat(server, key, { message: 'früh' });
    await core.waitForCalls(2);
    core.calls[0]?.fail();
    core.calls[1]?.release();

    expect((await late).status).toBe(500);
    expect((await early).status).toBe(200);
    expect(await server.services.usage.days(id, '2026-11-01', '2026-11-30')).toEqual([
      { day: '2026-11-12', used: 0 },
      { day: '2026-11-13', used: 1 },
    ]);
  });

  it('splits the days at local midnight across the end of a month in Europe/Berlin', async () => {
    const clock = { now: BERLIN_LAST_HOUR };
    server = await startAdminServer({
      clock: () => clock.now,
      env: { PLAUDER_QUOTA_TIMEZONE: 'Europe/Berlin' },
    });
    const { id, key } = await server.createKey();
    // 23:00 and 23:59:59.999 on 30 November in Berlin (22:00 and 22:59:59.999 UTC).
    expect((await chat(server, key, { message: 'a' })).status).toBe(200);
    clock.now = BERLIN_LAST_HOUR + 3_599_999;
    expect((await chat(server, key, { message: 'b' })).status).toBe(200);

    const november = (await admin(server, `keys/${id}/usage`)).json;
    expect(november.days).toHaveLength(30);
    expect(november.days[0]).toEqual({ date: '2026-11-01', used: 0 });
    expect(november.days.at(-1)).toEqual({ date: '2026-11-30', used: 2 });
    expect(november.currentMonth).toEqual({ day: 30, days: 30 });

    // 00:00 on 1 December in Berlin, still 30 November in UTC.
    clock.now = BERLIN_LAST_HOUR + 3_600_000;
    for (let i = 0; i < 3; i++)
      expect((await chat(server, key, { message: 'c' })).status).toBe(200);
    const december = (await admin(server, `keys/${id}/usage`)).json;
    expect(december.days).toEqual([{ date: '2026-12-01', used: 3 }]);
    expect(december.currentMonth).toEqual({ day: 1, days: 31 });
    expect(december.months.slice(-2)).toEqual([
      { month: '2026-11', used: 2, tokens: 0 },
      { month: '2026-12', used: 3, tokens: 0 },
    ]);
    // The month's days add up to the month's count.
    expect(sum(december.days)).toBe(december.months.at(-1).used);
  });
});
