/**
 * Four `plauder serve` processes sharing one PostgreSQL database, as behind a load
 * balancer: the quota is exact across them, key changes made through the CLI hold on
 * every instance within a second (announced, usually at once), and a PostgreSQL restart
 * under load neither crashes them nor charges a request that got no reply.
 */
import { sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { migrationProvider } from '../../src/storage/migrations/index.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { until } from '../helpers/sse.js';
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

/** The owner (in-process) migrates and issues keys; then four processes join. Stopped after the test. */
async function startCluster(database: TestDatabase): Promise<Cluster> {
  cleanup.push(() => database.drop());
  const owner = await startTestServer({ database, env: { PLAUDER_CORE: 'placeholder' } });
  cleanup.push(() => owner.close());
  const instances = await Promise.all(
    Array.from({ length: INSTANCES }, () => startServerProcess(owner.env)),
  );
  for (const instance of instances) cleanup.push(async () => void (await instance.stop()));
  return { owner, instances, env: owner.env };
}

/**
 * The cluster of the first three tests: four processes started together on an empty
 * database (the first test checks that one migrated while the others waited), then the
 * owner on the migrated database. The quota test and the key-change test work on keys of
 * their own, so they use the same four processes (started by whichever test runs first)
 * instead of starting four more each.
 */
const sharedSteps: (() => Promise<void>)[] = [];
let shared: Promise<Cluster> | undefined;
function sharedCluster(): Promise<Cluster> {
  shared ??= (async () => {
    const database = await createTestDatabase('postgres', POSTGRES_ADMIN_URL, { empty: true });
    sharedSteps.push(() => database.drop());
    const env = { ...database.env, PLAUDER_CORE: 'placeholder' };
    const instances = await Promise.all(
      Array.from({ length: INSTANCES }, () => startServerProcess(env)),
    );
    for (const instance of instances) sharedSteps.push(async () => void (await instance.stop()));
    const owner = await startTestServer({ database, env: { PLAUDER_CORE: 'placeholder' } });
    sharedSteps.push(() => owner.close());
    return { owner, instances, env };
  })();
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
    const { owner, instances, env } = await sharedCluster();
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
    const applied = await sql<{ name: string }>`select name from kysely_migration`.execute(
      owner.services.store.db,
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
    const ask = (instance: ServerProcess, key: string, path = '/api/chat') =>
      chat(instance, key, { message: 'Hallo' }, path);
    const everyInstance = (key: string, path = '/api/chat') =>
      Promise.all(instances.map((instance) => ask(instance, key, path)));
    const statuses = (results: { status: number }[]) => results.map((r) => r.status);
    /**
     * Milliseconds until every instance answers as `holds` wants, each asked again until it
     * does (the contract: a change holds on every instance within one second where key
     * lookups are cached; the announcement usually makes it milliseconds). Each instance is
     * asked again every 15 ms.
     */
    const untilEvery = async (
      key: string,
      holds: (answer: Awaited<ReturnType<typeof chat>>) => boolean,
      path = '/api/chat',
    ) => {
      const started = performance.now();
      const each = await Promise.all(
        instances.map((instance, n) =>
          until(
            async () => {
              if (holds(await ask(instance, key, path))) return performance.now() - started;
              askedAgain++;
              return undefined;
            },
            `instance ${n} to show the change`,
            2000,
          ),
        ),
      );
      return Math.max(...each);
    };
    const seen: Record<string, number> = {};
    /** Answers that still showed a change's old state (each instance is then asked again). */
    let askedAgain = 0;

    // Rotation: the old secret is refused everywhere, the new one works everywhere.
    const rotating = await owner.createKey();
    expect(statuses(await everyInstance(rotating.key))).toEqual([200, 200, 200, 200]);
    const rotated = await runCli(['keys', 'rotate', rotating.id, '--json'], env);
    expect(rotated.code).toBe(0);
    seen.rotation = await untilEvery(rotating.key, (r) => r.status === 401);
    expect(seen.rotation).toBeLessThan(1000);
    const newKey = JSON.parse(rotated.stdout).key as string;
    // A secret no instance has looked up before is read at once.
    expect(statuses(await everyInstance(newKey))).toEqual([200, 200, 200, 200]);

    // Deactivation: the soft error plan_inactive everywhere; activation restores it.
    expect((await runCli(['keys', 'deactivate', rotating.id], env)).code).toBe(0);
    seen.deactivation = await untilEvery(
      newKey,
      (r) => r.status === 200 && r.json.error?.code === 'plan_inactive',
      '/api/chat-en',
    );
    expect(seen.deactivation).toBeLessThan(1000);
    expect((await runCli(['keys', 'activate', rotating.id], env)).code).toBe(0);
    seen.activation = await untilEvery(
      newKey,
      (r) => r.status === 200 && typeof r.json.reply === 'string' && !r.json.error,
    );
    expect(seen.activation).toBeLessThan(1000);

    // Plan change: every instance reports the new limit.
    expect((await runCli(['keys', 'set-plan', rotating.id, 'plus'], env)).code).toBe(0);
    seen.planChange = await untilEvery(
      newKey,
      (r) => r.status === 200 && !r.json.error && r.headers.get('x-ratelimit-limit') === '5000',
    );
    expect(seen.planChange).toBeLessThan(1000);

    // Revocation: measured from the moment the CLI has finished.
    const revoking = await owner.createKey();
    expect(statuses(await everyInstance(revoking.key))).toEqual([200, 200, 200, 200]);
    expect((await runCli(['keys', 'revoke', revoking.id], env)).code).toBe(0);
    seen.revocation = await untilEvery(
      revoking.key,
      (r) => r.status === 401 && r.json.error?.code === 'invalid_api_key',
    );
    expect(seen.revocation).toBeLessThan(1000);
    console.log(
      `[multi-instance] after the CLI exited, the slowest of ${INSTANCES} instances saw each change after (ms): ${JSON.stringify(
        Object.fromEntries(Object.entries(seen).map(([what, ms]) => [what, Math.round(ms)])),
      )}; answers that still showed the old state: ${askedAgain} of ${5 * INSTANCES + askedAgain}`,
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
