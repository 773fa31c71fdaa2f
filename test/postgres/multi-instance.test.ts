/**
 * Four `plauder serve` processes sharing one PostgreSQL database, as behind a load
 * balancer: the quota is exact across them, key changes made through the CLI hold on
 * every instance at its next request, and a PostgreSQL restart under load neither
 * crashes them nor charges a request that got no reply.
 */
import { sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { migrationProvider } from '../../src/storage/migrations/index.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/processes.js';
import {
  createTestDatabase,
  POSTGRES_ADMIN_URL,
  type TestDatabase,
} from '../helpers/test-database.js';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';

const INSTANCES = 4;
const LIMIT = 1000;

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
  cleanup = [];
});

interface Cluster {
  readonly owner: TestServer;
  readonly instances: ServerProcess[];
  readonly env: Record<string, string>;
}

/**
 * The owner (in-process) migrates and issues keys; then four processes join. Stopped after
 * the test, or with `steps` when they are given.
 */
async function startCluster(
  database: TestDatabase,
  steps?: (() => Promise<void>)[],
): Promise<Cluster> {
  const push = (step: () => Promise<void>) => (steps ?? cleanup).push(step);
  push(() => database.drop());
  const owner = await startTestServer({ database, env: { PLAUDER_CORE: 'placeholder' } });
  push(() => owner.close());
  const instances = await Promise.all(
    Array.from({ length: INSTANCES }, () => startServerProcess(owner.env)),
  );
  for (const instance of instances) push(async () => void (await instance.stop()));
  return { owner, instances, env: owner.env };
}

/**
 * The quota test and the key-change test each work on keys of their own, so they share
 * one cluster (started by whichever runs first) instead of starting four processes each.
 */
const sharedSteps: (() => Promise<void>)[] = [];
let shared: Promise<Cluster> | undefined;
function sharedCluster(): Promise<Cluster> {
  shared ??= createTestDatabase('postgres').then((database) => startCluster(database, sharedSteps));
  return shared;
}
afterAll(async () => {
  for (const step of sharedSteps.reverse()) await step().catch(() => {});
});

interface Tally {
  replies: number;
  quotaExceeded: number;
  internalErrors: number;
  other: string[];
}

function record(tally: Tally, res: Awaited<ReturnType<typeof chat>>): void {
  if (res.status === 200 && typeof res.json?.reply === 'string' && !res.json.error) tally.replies++;
  else if (res.status === 429 && res.json?.error?.code === 'quota_exceeded') tally.quotaExceeded++;
  else if (res.status === 500 && res.json?.error?.code === 'internal_error') tally.internalErrors++;
  else tally.other.push(`${res.status} ${res.text.slice(0, 120)}`);
}

const newTally = (): Tally => ({ replies: 0, quotaExceeded: 0, internalErrors: 0, other: [] });

describe('four instances on one PostgreSQL database', () => {
  it('start together on an empty database: one migrates, under the advisory lock, the others wait', async () => {
    const database = await createTestDatabase('postgres', POSTGRES_ADMIN_URL, { empty: true });
    cleanup.push(() => database.drop());
    const env = { ...database.env, PLAUDER_CORE: 'placeholder' };
    const instances = await Promise.all(
      Array.from({ length: INSTANCES }, () => startServerProcess(env)),
    );
    for (const instance of instances) cleanup.push(async () => void (await instance.stop()));
    for (const instance of instances) {
      expect((await http(`${instance.url}/readyz`)).status).toBe(200);
    }
    const created = await runCli(
      ['keys', 'create', '--name', 'n', '--plan', 'standard', '--json'],
      env,
    );
    const { key } = JSON.parse(created.stdout) as { key: string };
    for (const instance of instances) {
      expect((await chat(instance, key, { message: 'Hallo' })).status).toBe(200);
    }
    // Each migration ran exactly once.
    const probe = await startTestServer({ database, env: { PLAUDER_CORE: 'placeholder' } });
    cleanup.push(() => probe.close());
    const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(
      probe.services.store.db,
    );
    const known = Object.keys(await migrationProvider.getMigrations()).sort();
    expect(applied.rows.map((r) => r.name).sort()).toEqual(known);
  });

  it('give exactly 1000 replies for 1200 concurrent requests on a Standard key', async () => {
    const { owner, instances } = await sharedCluster();
    const { id, key } = await owner.createKey({ plan: 'standard' });

    const tally = newTally();
    await Promise.all(
      Array.from({ length: 1200 }, async (_, i) => {
        const instance = instances[i % INSTANCES] as ServerProcess;
        record(tally, await chat(instance, key, { message: `Frage ${i}` }));
      }),
    );

    expect(tally.other).toEqual([]);
    expect(tally.internalErrors).toBe(0);
    expect(tally.replies).toBe(LIMIT);
    expect(tally.quotaExceeded).toBe(200);
    const month = owner.services.quota.monthOf(Date.now()).month;
    expect(await owner.services.usage.used(id, month)).toBe(LIMIT);
  });

  it('honour a revocation, a rotation and a plan change made through the CLI on every instance within a second', async () => {
    const { owner, instances, env } = await sharedCluster();
    const everyInstance = (key: string, path = '/api/chat') =>
      Promise.all(instances.map((instance) => chat(instance, key, { message: 'Hallo' }, path)));
    const statuses = (results: { status: number }[]) => results.map((r) => r.status);

    // Rotation: the old secret is refused everywhere, the new one works everywhere.
    const rotating = await owner.createKey();
    expect(statuses(await everyInstance(rotating.key))).toEqual([200, 200, 200, 200]);
    const rotated = await runCli(['keys', 'rotate', rotating.id, '--json'], env);
    expect(rotated.code).toBe(0);
    let started = Date.now();
    expect(statuses(await everyInstance(rotating.key))).toEqual([401, 401, 401, 401]);
    const newKey = JSON.parse(rotated.stdout).key as string;
    expect(statuses(await everyInstance(newKey))).toEqual([200, 200, 200, 200]);
    expect(Date.now() - started).toBeLessThan(1000);

    // Deactivation: the soft error plan_inactive everywhere; activation restores it.
    expect((await runCli(['keys', 'deactivate', rotating.id], env)).code).toBe(0);
    const inactive = await everyInstance(newKey, '/api/chat-en');
    expect(inactive.map((r) => r.json.error?.code)).toEqual(Array(INSTANCES).fill('plan_inactive'));
    expect((await runCli(['keys', 'activate', rotating.id], env)).code).toBe(0);
    expect(statuses(await everyInstance(newKey))).toEqual([200, 200, 200, 200]);

    // Plan change: every instance reports the new limit at its next request.
    expect((await runCli(['keys', 'set-plan', rotating.id, 'plus'], env)).code).toBe(0);
    const limits = await everyInstance(newKey);
    expect(limits.map((r) => r.headers.get('x-ratelimit-limit'))).toEqual(
      Array(INSTANCES).fill('5000'),
    );

    // Revocation: measured from the moment the CLI has finished.
    const revoking = await owner.createKey();
    expect(statuses(await everyInstance(revoking.key))).toEqual([200, 200, 200, 200]);
    expect((await runCli(['keys', 'revoke', revoking.id], env)).code).toBe(0);
    started = Date.now();
    const refused = await everyInstance(revoking.key);
    const elapsed = Date.now() - started;
    expect(statuses(refused)).toEqual([401, 401, 401, 401]);
    expect(refused.every((r) => r.json.error.code === 'invalid_api_key')).toBe(true);
    expect(elapsed).toBeLessThan(1000);
    console.log(
      `[multi-instance] revocation refused by all ${INSTANCES} instances ${elapsed} ms after the CLI exited`,
    );
  });

  it('survive PostgreSQL stopped and started under load: no crash, no overshoot, counted = replies delivered', async () => {
    const postgres: PrivatePostgres = await startPrivatePostgres();
    cleanup.push(() => postgres.destroy());
    const { owner, instances } = await startCluster(
      await createTestDatabase('postgres', postgres.url),
    );
    const { id, key } = await owner.createKey({ plan: 'standard' });

    const tally = newTally();
    let outage: Promise<void> | undefined;
    const deadline = Date.now() + 40_000;
    // 24 clients in a closed loop until the month is used up and refusals follow.
    await Promise.all(
      Array.from({ length: 24 }, async (_, client) => {
        let i = 0;
        while (tally.quotaExceeded < 100 && Date.now() < deadline) {
          const instance = instances[(client + i++) % INSTANCES] as ServerProcess;
          const res = await chat(instance, key, { message: `Last ${client}/${i}` });
          record(tally, res);
          if (tally.replies >= 300 && !outage) {
            outage = (async () => {
              await postgres.stop('fast');
              await new Promise((resolve) => setTimeout(resolve, 1500));
              await postgres.start();
            })();
          }
          // While the database is down, failures come fast; do not spin.
          if (res.status === 500) await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }),
    );
    await outage;

    console.log(
      `[multi-instance] outage under load: ${tally.replies} replies, ${tally.quotaExceeded} × 429, ${tally.internalErrors} × 500`,
    );
    expect(tally.other).toEqual([]);
    expect(tally.internalErrors).toBeGreaterThan(0);
    expect(tally.replies).toBeLessThanOrEqual(LIMIT);
    for (const instance of instances) {
      expect(instance.child.exitCode).toBeNull();
      expect((await http(`${instance.url}/readyz`)).status).toBe(200);
    }
    // Refunds that waited for the database are written by now or within their backoff.
    const month = owner.services.quota.monthOf(Date.now()).month;
    const started = Date.now();
    let used = await owner.services.usage.used(id, month);
    while (used !== tally.replies && Date.now() - started < 15_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      used = await owner.services.usage.used(id, month);
    }
    expect(used).toBe(tally.replies);
    expect(tally.replies).toBe(LIMIT);
  });
});
