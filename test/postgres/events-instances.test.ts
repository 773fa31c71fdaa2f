/**
 * Quota events across four `plauder serve` instances on one PostgreSQL database: the
 * requests that reach 80 % and 100 % may land on any instance, yet each event is recorded
 * once, and the four senders competing for the outbox deliver each event to the receiver
 * once (a failed attempt is retried by whichever instance claims it next).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { chat, startTestServer } from '../helpers/test-server.js';
import { acceptedByType, startWebhookReceiver } from '../helpers/webhook-receiver.js';

const INSTANCES = 4;
const cleanup: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
});

describe('events on four instances sharing PostgreSQL', () => {
  it('record and deliver each quota event once for 3 keys × 60 concurrent requests', async () => {
    const database = await createTestDatabase('postgres');
    cleanup.push(() => database.drop());
    const receiver = await startWebhookReceiver();
    cleanup.push(() => receiver.stop());
    // Every third event's first attempt fails.
    let events = 0;
    const failFirst = new Set<string>();
    receiver.answer = (d) => {
      if (d.attempt === 0 && events++ % 3 === 0) failFirst.add(d.id);
      return d.attempt === 0 && failFirst.has(d.id) ? 500 : 200;
    };
    const owner = await startTestServer({
      database,
      env: {
        PLAUDER_CORE: 'placeholder',
        PLAUDER_PLANS: 'standard=1000,small=40/month',
        PLAUDER_WEBHOOK_URL: receiver.url,
        PLAUDER_WEBHOOK_SECRET: receiver.secret,
        PLAUDER_WEBHOOK_POLL_INTERVAL: '100ms',
        PLAUDER_WEBHOOK_RETRY_BASE: '200ms',
      },
    });
    cleanup.push(() => owner.close());
    const keys = await Promise.all(
      [1, 2, 3].map((n) => owner.createKey({ plan: 'small', name: `k${n}` })),
    );
    const instances: ServerProcess[] = await Promise.all(
      Array.from({ length: INSTANCES }, () => startServerProcess(owner.env)),
    );
    for (const instance of instances) cleanup.push(() => instance.stop());

    const statuses = await Promise.all(
      keys.flatMap(({ key }) =>
        Array.from({ length: 60 }, async (_, i) => {
          const res = await chat(instances[i % INSTANCES] as ServerProcess, key, {
            message: `q${i}`,
          });
          return res.status;
        }),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(3 * 40);
    expect(statuses.filter((s) => s === 429)).toHaveLength(3 * 20);

    // 3 × key.created, 3 × quota.warning, 3 × quota.exhausted.
    await receiver.waitFor(() => receiver.accepted().length >= 9, 30_000);
    // Once the outbox has recorded every delivery, no instance can claim an event again.
    const deadline = Date.now() + 10_000;
    while ((await owner.services.events.counts()).delivered < 9 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(receiver.rejected).toEqual([]);
    const byType = acceptedByType(receiver);
    for (const type of ['quota.warning', 'quota.exhausted']) {
      const data = (byType.get(type) ?? []).map((d) => d.event.data);
      expect(data.map((d) => d.keyId).sort()).toEqual(keys.map((k) => k.id).sort());
      expect(new Set(data.map((d) => d.used))).toEqual(
        new Set([type === 'quota.warning' ? 32 : 40]),
      );
    }
    const accepted = receiver.accepted().map((d) => d.id);
    expect(accepted).toHaveLength(9);
    expect(new Set(accepted).size).toBe(9);
    expect(failFirst.size).toBeGreaterThan(0);
    expect(await owner.services.events.counts()).toEqual({ pending: 0, delivered: 9, failed: 0 });
  }, 90_000);
});
