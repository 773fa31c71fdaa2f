/**
 * Nothing is lost (docs/contract.md, "Events"): events recorded by the CLI with no server running and by
 * a server whose receiver is down survive that server being killed with SIGKILL before
 * any delivery succeeded; two fresh instances on the same database then deliver every
 * event, each to the receiver once, although the receiver fails first attempts on
 * purpose. Every signature is verified with the `standardwebhooks` package.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { chat, http } from '../helpers/test-server.js';
import { acceptedByType, startWebhookReceiver } from '../helpers/webhook-receiver.js';

const ADMIN_TOKEN = 'admin-token-for-the-restart-test-0123456789';
const cleanup: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
});

async function events(instance: ServerProcess) {
  const res = await http(`${instance.url}/admin/v1/events`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return res.json as { counts: Record<string, number>; events: Array<Record<string, any>> };
}

async function until(condition: () => Promise<boolean>, what: string, ms = 20_000) {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('webhook delivery across a crash', () => {
  it('delivers every event once after a SIGKILL while the receiver was down', async () => {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    const receiver = await startWebhookReceiver();
    cleanup.push(() => receiver.stop());
    await receiver.stop(); // down until the service has been killed
    const env = {
      ...database.env,
      PLAUDER_CORE: 'placeholder',
      PLAUDER_PLANS: 'standard=1000,small=10/month+100/minute',
      PLAUDER_ADMIN_TOKEN: ADMIN_TOKEN,
      PLAUDER_WEBHOOK_URL: receiver.url,
      PLAUDER_WEBHOOK_SECRET: receiver.secret,
      PLAUDER_WEBHOOK_POLL_INTERVAL: '100ms',
      PLAUDER_WEBHOOK_RETRY_BASE: '200ms',
      PLAUDER_WEBHOOK_TIMEOUT: '2s',
    };

    // key.created, recorded by the CLI with no server running.
    const created = await runCli(
      ['keys', 'create', '--name', 'Crash test', '--plan', 'small', '--json'],
      env,
    );
    expect(created.code).toBe(0);
    const { id, key } = JSON.parse(created.stdout) as { id: string; key: string };

    const first = await startServerProcess(env);
    cleanup.push(() => first.stop());
    // quota.warning and quota.exhausted, from concurrent requests.
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => chat(first, key, { message: `Frage ${i}` })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([...Array(10).fill(200), 429, 429]);
    // key.updated and key.rotated, through the CLI while the server runs.
    expect((await runCli(['keys', 'set-plan', id, 'standard'], env)).code).toBe(0);
    expect((await runCli(['keys', 'rotate', id, '--json'], env)).code).toBe(0);

    // Every event has been tried (the receiver is down) and none delivered: kill the server.
    await until(async () => {
      const state = await events(first);
      return state.events.length === 5 && state.events.every((e) => e.attempts >= 1);
    }, 'every event to be tried once');
    expect((await events(first)).counts).toEqual({ pending: 5, delivered: 0, failed: 0 });
    first.child.kill('SIGKILL');
    await first.stop();

    // The receiver comes back and fails every event's first attempt on purpose.
    receiver.answer = (delivery) => (delivery.attempt === 0 ? 503 : 204);
    await receiver.start();
    const instances = await Promise.all([startServerProcess(env), startServerProcess(env)]);
    for (const instance of instances) cleanup.push(() => instance.stop());

    await receiver.waitFor(() => receiver.accepted().length >= 5, 40_000);
    await until(
      async () => (await events(instances[0] as ServerProcess)).counts.delivered === 5,
      'the outbox to record five deliveries',
    );

    expect(receiver.rejected).toEqual([]);
    const byType = acceptedByType(receiver);
    expect([...byType.keys()].sort()).toEqual([
      'key.created',
      'key.rotated',
      'key.updated',
      'quota.exhausted',
      'quota.warning',
    ]);
    // Each event taken once; each quota event recorded once.
    for (const deliveries of byType.values()) expect(deliveries).toHaveLength(1);
    const acceptedIds = receiver.accepted().map((d) => d.id);
    expect(new Set(acceptedIds).size).toBe(acceptedIds.length);
    expect(byType.get('quota.warning')?.[0]?.event.data).toMatchObject({ keyId: id, used: 8 });
    expect(byType.get('quota.exhausted')?.[0]?.event.data).toMatchObject({ keyId: id, used: 10 });
    // The failed first attempts were retried with the same webhook-id.
    for (const deliveryId of acceptedIds) {
      const attempts = receiver.deliveries.filter((d) => d.id === deliveryId);
      expect(attempts.map((d) => d.answered)).toEqual([503, 204]);
    }
    const state = await events(instances[1] as ServerProcess);
    expect(state.counts).toEqual({ pending: 0, delivered: 5, failed: 0 });
    console.log(
      `[webhooks after SIGKILL] ${receiver.deliveries.length} attempts received, 5 events delivered once each`,
    );
  }, 90_000);
});
