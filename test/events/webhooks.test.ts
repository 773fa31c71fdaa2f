/**
 * Events and their delivery (docs/contract.md, "Events") on the in-process server, received by a real
 * HTTP receiver that verifies every signature with the `standardwebhooks` package: key
 * events with their bodies, quota events once per key and month under concurrency and
 * refunds, retries with the same webhook-id, 410 Gone, giving up after the retry window,
 * and the state in the admin API and /metrics.
 */
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { CoreAdapter } from '../../src/core/core-adapter.js';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';
import { acceptedByType, startWebhookReceiver } from '../helpers/webhook-receiver.js';

const ADMIN_TOKEN = 'admin-token-for-the-events-tests-0123456789';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

let cleanup: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
  cleanup = [];
});

async function setUp(
  options: {
    clock?: () => number;
    core?: CoreAdapter;
    env?: Record<string, string>;
    receiverClock?: () => number;
  } = {},
) {
  const receiver = await startWebhookReceiver(
    options.receiverClock ? { clock: options.receiverClock } : {},
  );
  cleanup.push(() => receiver.stop());
  const server = await startTestServer({
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.core ? { core: options.core } : {}),
    env: {
      PLAUDER_CORE: 'placeholder',
      PLAUDER_PLANS: 'standard=1000,small=10/month+100/minute',
      PLAUDER_ADMIN_TOKEN: ADMIN_TOKEN,
      PLAUDER_WEBHOOK_URL: receiver.url,
      PLAUDER_WEBHOOK_SECRET: receiver.secret,
      PLAUDER_WEBHOOK_POLL_INTERVAL: '50ms',
      PLAUDER_WEBHOOK_RETRY_BASE: '50ms',
      ...options.env,
    },
  });
  cleanup.push(() => server.close());
  return { receiver, server };
}

const tick = (server: TestServer) => server.app.webhookSender?.tick() ?? Promise.resolve();

async function adminEvents(server: TestServer, query = '') {
  const res = await http(`${server.url}/admin/v1/events${query}`, { headers: admin });
  expect(res.status).toBe(200);
  return res.json;
}

/** The receiver answers before the sender records the outcome: wait for the outbox too. */
async function recorded(server: TestServer, delivered: number) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const state = await adminEvents(server);
    if (state.counts.delivered >= delivered || Date.now() > deadline) return state;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function metric(server: TestServer, line: RegExp): Promise<number> {
  const text = (await http(`${server.url}/metrics`)).text;
  const match = text.split('\n').find((l) => line.test(l));
  return match === undefined ? 0 : Number(match.split(' ').pop());
}

describe('key events', () => {
  it('sends key.created, key.updated, key.rotated and key.revoked, signed, without any secret', async () => {
    const { receiver, server } = await setUp();
    const created = await http(`${server.url}/admin/v1/keys`, {
      headers: admin,
      body: { name: 'Shop backend', plan: 'standard' },
    });
    expect(created.status).toBe(201);
    const { id, key } = created.json;
    await http(`${server.url}/admin/v1/keys/${id}`, {
      method: 'PATCH',
      headers: admin,
      body: { plan: 'small', active: false },
    });
    // Changing nothing is no event.
    await http(`${server.url}/admin/v1/keys/${id}`, {
      method: 'PATCH',
      headers: admin,
      body: { plan: 'small' },
    });
    const rotated = await http(`${server.url}/admin/v1/keys/${id}/rotate`, {
      headers: admin,
      body: { grace: '1h' },
    });
    await http(`${server.url}/admin/v1/keys/${id}/revoke`, { method: 'POST', headers: admin });

    await receiver.waitFor(() => receiver.accepted().length >= 4);
    const events = receiver.accepted().map((d) => d.event);
    expect(events.map((e) => e.type).sort()).toEqual([
      'key.created',
      'key.revoked',
      'key.rotated',
      'key.updated',
    ]);
    const byType = Object.fromEntries(events.map((e) => [e.type, e]));
    expect(byType['key.created']?.data).toEqual({
      keyId: id,
      name: 'Shop backend',
      plan: 'standard',
      active: true,
    });
    expect(byType['key.updated']?.data).toEqual({
      keyId: id,
      name: 'Shop backend',
      plan: 'small',
      active: false,
      previous: { plan: 'standard', active: true },
    });
    expect(byType['key.rotated']?.data).toEqual({
      keyId: id,
      name: 'Shop backend',
      plan: 'small',
      previousKeyExpiresAt: rotated.json.previousKeyExpiresAt,
    });
    expect(byType['key.revoked']?.data).toEqual({ keyId: id, name: 'Shop backend', plan: 'small' });
    for (const event of events) {
      expect(Object.keys(event)).toEqual(['type', 'timestamp', 'data']);
      expect(new Date(event.timestamp).toISOString()).toBe(event.timestamp);
    }
    // No secret in any body: neither key, nor its hash.
    const bodies = receiver.deliveries.map((d) => d.body).join('\n');
    for (const secret of [key, rotated.json.key]) {
      expect(bodies).not.toContain(secret);
      expect(bodies).not.toContain(createHash('sha256').update(secret).digest('hex'));
    }
    expect(bodies).not.toMatch(/plauder_[A-Za-z0-9]{8}/);
    expect(receiver.rejected).toEqual([]);
    // Each event was delivered once, each with its own stable id.
    expect(new Set(receiver.deliveries.map((d) => d.id)).size).toBe(4);
    expect(receiver.deliveries.every((d) => /^msg_[0-9a-f]{32}$/.test(d.id))).toBe(true);
  });
});

describe('quota events', () => {
  it('sends quota.warning at 80 % and quota.exhausted at 100 % once each for 15 concurrent requests', async () => {
    const { receiver, server } = await setUp();
    const { id, key } = await server.createKey({ plan: 'small', name: 'Busy' });
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) => chat(server, key, { message: `Geheime Frage ${i}` })),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);

    await receiver.waitFor(() => receiver.accepted().length >= 3);
    const month = server.services.quota.monthOf(Date.now()).month;
    const byType = acceptedByType(receiver);
    expect(byType.get('quota.warning')?.map((d) => d.event.data)).toEqual([
      { keyId: id, name: 'Busy', plan: 'small', month, used: 8, limit: 10 },
    ]);
    expect(byType.get('quota.exhausted')?.map((d) => d.event.data)).toEqual([
      { keyId: id, name: 'Busy', plan: 'small', month, used: 10, limit: 10 },
    ]);
    // No message text in any event.
    expect(receiver.deliveries.some((d) => d.body.includes('Geheime'))).toBe(false);
    // Nothing else is on its way.
    const state = await recorded(server, 3);
    expect(state.counts).toEqual({ pending: 0, delivered: 3, failed: 0 });
  });

  it('sends quota.warning once even when the request that reached 80 % was refunded and the count crossed again', async () => {
    let calls = 0;
    const core: CoreAdapter = {
      name: 'fails-once',
      reply: async () => {
        calls++;
        // The eighth request (the one that reaches 8 of 10) fails and is refunded.
        if (calls === 8) throw new Error('core down');
        return 'ok';
      },
    };
    const { receiver, server } = await setUp({ core });
    const { id, key } = await server.createKey({ plan: 'small' });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await chat(server, key, { message: 'x' })).status);
    expect(statuses.filter((s) => s === 500)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(
      await server.services.usage.used(id, server.services.quota.monthOf(Date.now()).month),
    ).toBe(10);

    await receiver.waitFor(() => receiver.accepted().length >= 3);
    await tick(server);
    const byType = acceptedByType(receiver);
    expect(byType.get('quota.warning')).toHaveLength(1);
    expect(byType.get('quota.exhausted')).toHaveLength(1);
    expect(byType.get('key.created')).toHaveLength(1);
    expect((await recorded(server, 3)).counts).toEqual({ pending: 0, delivered: 3, failed: 0 });
  });
});

describe('delivery', () => {
  it('retries failed attempts with the same webhook-id and a fresh signature until a 2xx', async () => {
    const { receiver, server } = await setUp();
    // 500, 503, then 200: each event takes three attempts.
    receiver.answer = (d) => [500, 503][d.attempt] ?? 200;
    await server.createKey({ name: 'a' });
    await server.createKey({ name: 'b' });

    await receiver.waitFor(() => receiver.accepted().length >= 2);
    expect(receiver.rejected).toEqual([]);
    const ids = [...new Set(receiver.deliveries.map((d) => d.id))];
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      const attempts = receiver.deliveries.filter((d) => d.id === id);
      expect(attempts.map((d) => d.answered)).toEqual([500, 503, 200]);
      // The same bytes every time; the timestamp is the attempt's.
      expect(new Set(attempts.map((d) => d.body)).size).toBe(1);
    }
    const state = await recorded(server, 2);
    expect(state.counts).toEqual({ pending: 0, delivered: 2, failed: 0 });
    expect(state.events.map((e: any) => [e.status, e.attempts, e.lastStatus])).toEqual([
      ['delivered', 3, 200],
      ['delivered', 3, 200],
    ]);
    expect(await metric(server, /^plauder_webhook_attempts_total\{result="retry"\}/)).toBe(4);
    expect(await metric(server, /^plauder_webhook_attempts_total\{result="delivered"\}/)).toBe(2);
    expect(await metric(server, /^plauder_webhook_events\{status="delivered"\}/)).toBe(2);
  });

  it('stops sending after a 410 Gone, on every instance, until the receiver is enabled again', async () => {
    const { receiver, server } = await setUp();
    receiver.answer = () => 410;
    await server.createKey({ name: 'first' });
    await receiver.waitFor(() => receiver.deliveries.length >= 1);
    await server.createKey({ name: 'second' });
    await tick(server);
    await tick(server);

    expect(receiver.deliveries).toHaveLength(1);
    const state = await adminEvents(server);
    expect(state.receiver).toMatchObject({ url: receiver.url, disabled: true });
    expect(state.counts).toEqual({ pending: 2, delivered: 0, failed: 0 });
    expect(await metric(server, /^plauder_webhook_receiver_disabled /)).toBe(1);
    expect(await metric(server, /^plauder_webhook_attempts_total\{result="gone"\}/)).toBe(1);

    receiver.answer = () => 200;
    expect(await server.services.events.enableReceiver(receiver.url)).toBe(true);
    await receiver.waitFor(() => receiver.accepted().length >= 2);
    expect((await adminEvents(server)).receiver.disabled).toBe(false);
  });

  it('retries with growing, jittered delays for at least 24 hours, then marks the event failed', async () => {
    let now = Date.now();
    const clock = () => now;
    const { receiver, server } = await setUp({
      clock,
      receiverClock: clock,
      env: { PLAUDER_WEBHOOK_RETRY_BASE: '5s', PLAUDER_WEBHOOK_POLL_INTERVAL: '1h' },
    });
    receiver.answer = () => 500;
    const createdAt = now;
    await server.createKey({ name: 'never delivered' });
    await tick(server);

    const attemptTimes: number[] = [];
    for (let i = 0; i < 200; i++) {
      const [event] = (await adminEvents(server)).events;
      if (event.status !== 'pending') break;
      attemptTimes.push(now);
      now = Date.parse(event.nextAttemptAt);
      await tick(server);
    }
    const [event] = (await adminEvents(server)).events;
    expect(event.status).toBe('failed');
    expect(event.nextAttemptAt).toBeNull();
    expect(receiver.deliveries).toHaveLength(event.attempts);
    expect(receiver.rejected).toEqual([]);
    // The last attempt came at least 24 hours after the event.
    expect(Date.parse(event.lastAttemptAt) - createdAt).toBeGreaterThanOrEqual(24 * 3_600_000);
    const delays = attemptTimes.slice(1).map((t, i) => t - (attemptTimes[i] as number));
    // Exponential from 5 s with jitter in [50 %, 100 %], capped at one hour.
    delays.forEach((delay, i) => {
      const full = Math.min(3_600_000, 5_000 * 2 ** i);
      expect(delay).toBeGreaterThanOrEqual(full / 2);
      expect(delay).toBeLessThanOrEqual(full);
    });
    expect(new Set(receiver.deliveries.map((d) => d.id)).size).toBe(1);
    expect(await metric(server, /^plauder_webhook_attempts_total\{result="gave_up"\}/)).toBe(1);
    expect(await metric(server, /^plauder_webhook_events\{status="failed"\}/)).toBe(1);
  });

  it('answers a round asked for while another runs only once a round that began after it is done', async () => {
    const { receiver, server } = await setUp({ env: { PLAUDER_WEBHOOK_POLL_INTERVAL: '1h' } });
    let release = () => {};
    const held = new Promise<number>((resolve) => {
      release = () => resolve(204);
    });
    let arrived = false;
    receiver.answer = () => {
      if (arrived) return 204;
      arrived = true;
      return held;
    };
    await server.createKey({ name: 'first' });
    // The round sending the first event waits for the receiver's answer.
    const deadline = Date.now() + 10_000;
    while (!arrived && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(arrived).toBe(true);
    await server.createKey({ name: 'second' });
    const ticked = tick(server);
    release();
    await ticked;
    // The round that was running had claimed the first event only; the tick waited for the next.
    expect(receiver.deliveries.map((d) => d.event.data.name)).toEqual(['first', 'second']);
  });

  it('records nothing without a receiver', async () => {
    const server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
    cleanup.push(() => server.close());
    await server.createKey();
    expect(await server.services.events.counts()).toEqual({ pending: 0, delivered: 0, failed: 0 });
    expect(server.app.webhookSender).toBeUndefined();
  });
});
