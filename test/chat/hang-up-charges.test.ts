/**
 * What a hang-up before delivery still costs (docs/contract.md, "The client goes away";
 * docs/quota-and-limits.md, "Hang-ups"), on a real server in front of the real upstream
 * process: the minute's unit is kept for every hang-up, with or without an
 * `Idempotency-Key`, and a key's hang-ups beyond `PLAUDER_FREE_HANGUPS` in a minute count as
 * delivered, so no key makes the upstream work for nothing without limit.
 *
 * The server's clock stands still inside one minute, so that every request of a test falls
 * in the same clock minute however slow the machine is.
 */
import { describe, expect } from 'vitest';
import type { Upstream } from '../core/openai/upstream-process.js';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { until } from '../helpers/sse.js';
import type { TestServer } from '../helpers/test-server.js';

const NOON = Date.UTC(2026, 10, 23, 12, 0, 30);

/**
 * Sends a chat request and hangs up as soon as the upstream has received it; a request
 * answered before it reaches the upstream (a refusal) is returned instead.
 */
async function hangUpOrRefused(
  server: TestServer,
  upstream: Upstream,
  key: string,
  headers: Record<string, string>,
): Promise<{ status: number; code?: string } | 'hung up'> {
  const controller = new AbortController();
  const before = (await upstream.received()).requests.length;
  const answer = fetch(`${server.url}/api/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ message: 'Erzähl mir etwas Langes' }),
    signal: controller.signal,
  }).then(async (res) => {
    const body = (await res.json()) as { error?: { code?: string } };
    return { status: res.status, code: body.error?.code };
  });
  let answered: { status: number; code?: string } | undefined;
  answer.then(
    (result) => {
      answered = result;
    },
    () => {},
  );
  await until(async () => {
    if (answered !== undefined) return true;
    return (await upstream.received()).requests.length > before ? true : undefined;
  }, 'the upstream to receive the request, or an answer');
  if (answered !== undefined) return answered;
  controller.abort();
  await expect(answer).rejects.toThrow();
  return 'hung up';
}

/** The hang-ups the key's month row has counted in its current hang-up minute. */
async function hangUpsCounted(server: TestServer, keyId: string): Promise<number> {
  const month = server.services.quota.monthOf(NOON).month;
  const row = await server.services.store.db
    .selectFrom('usage')
    .select('hangups')
    .where('key_id', '=', keyId)
    .where('month', '=', month)
    .executeTakeFirst();
  return Number(row?.hangups ?? 0);
}

describe('a hang-up before delivery', () => {
  test("keeps the minute's unit with or without an Idempotency-Key: on a 5/minute plan the upstream sees 5 of 8, the rest are rate_limited", async ({
    upstream,
    serve,
  }) => {
    await upstream.script(...Array.from({ length: 8 }, () => ({ hang: true })));
    // A per-minute limit is what this test is about: the shipped plans have none.
    const server = await serve({
      env: openAiEnv(upstream, { PLAUDER_PLANS: 'standard=1000/month+5/minute' }),
      clock: () => NOON,
    });
    const { id, key } = await server.createKey();

    const outcomes: Array<Awaited<ReturnType<typeof hangUpOrRefused>>> = [];
    let hungUp = 0;
    for (let i = 0; i < 8; i++) {
      // Every other request carries an Idempotency-Key of its own.
      const headers: Record<string, string> = i % 2 === 0 ? { 'idempotency-key': `gone-${i}` } : {};
      const outcome = await hangUpOrRefused(server, upstream, key, headers);
      outcomes.push(outcome);
      if (outcome !== 'hung up') continue;
      hungUp += 1;
      // The turn has settled its unit once its hang-up is counted.
      await until(
        async () => ((await hangUpsCounted(server, id)) === hungUp ? true : undefined),
        'the hang-up to be counted',
      );
    }

    expect((await upstream.received()).requests).toHaveLength(5);
    expect(outcomes.slice(0, 5)).toEqual(Array(5).fill('hung up'));
    expect(outcomes.slice(5)).toEqual(Array(3).fill({ status: 429, code: 'rate_limited' }));
    // Within the free hang-ups the month got every unit back.
    expect(await server.services.usage.used(id, server.services.quota.monthOf(NOON).month)).toBe(0);
  });

  test('counts as delivered beyond PLAUDER_FREE_HANGUPS (10) a minute: 12 hang-ups leave 2 used in the month and its day', async ({
    upstream,
    serve,
  }) => {
    await upstream.script(...Array.from({ length: 12 }, () => ({ hang: true })));
    const server = await serve({ env: openAiEnv(upstream), clock: () => NOON });
    const { id, key } = await server.createKey();

    for (let i = 1; i <= 12; i++) {
      // Every third with an Idempotency-Key: its unit goes back with its claim.
      const headers: Record<string, string> = i % 3 === 0 ? { 'idempotency-key': `gone-${i}` } : {};
      expect(await hangUpOrRefused(server, upstream, key, headers)).toBe('hung up');
      await until(
        async () => ((await hangUpsCounted(server, id)) === i ? true : undefined),
        'the hang-up to be counted',
      );
    }

    const month = server.services.quota.monthOf(NOON).month;
    expect(await server.services.usage.used(id, month)).toBe(2);
    const days = await server.services.quota.daysOfMonth(id, NOON);
    expect(days.reduce((sum, day) => sum + day.used, 0)).toBe(2);
    const usage = await fetch(`${server.url}/api/usage`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(((await usage.json()) as { used: number }).used).toBe(2);
  });

  test('is bounded exactly under concurrency: 12 hang-ups at once, half with an Idempotency-Key, leave 2 used', async ({
    upstream,
    serve,
  }) => {
    await upstream.script(...Array.from({ length: 12 }, () => ({ hang: true })));
    const server = await serve({ env: openAiEnv(upstream), clock: () => NOON });
    const { id, key } = await server.createKey();

    const requests = Array.from({ length: 12 }, (_, i) => {
      const controller = new AbortController();
      const headers: Record<string, string> =
        i % 2 === 0 ? { 'idempotency-key': `together-${i}` } : {};
      const answer = fetch(`${server.url}/api/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ message: `Erzähl mir etwas Langes ${i}` }),
        signal: controller.signal,
      });
      return { controller, answer };
    });
    await until(
      async () => ((await upstream.received()).requests.length === 12 ? true : undefined),
      'the upstream to receive every request',
    );
    for (const { controller } of requests) controller.abort();
    for (const { answer } of requests) await expect(answer).rejects.toThrow();
    await until(
      async () => ((await hangUpsCounted(server, id)) === 12 ? true : undefined),
      'every hang-up to be counted',
    );
    const month = server.services.quota.monthOf(NOON).month;
    expect(await server.services.usage.used(id, month)).toBe(2);
    const days = await server.services.quota.daysOfMonth(id, NOON);
    expect(days.reduce((sum, day) => sum + day.used, 0)).toBe(2);
  });
});
