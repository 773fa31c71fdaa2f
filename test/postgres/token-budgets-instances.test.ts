/**
 * Token budgets across `plauder serve` instances on one PostgreSQL database
 * (docs/quota-and-limits.md, "Token budgets"), against the real fake upstream: 200
 * concurrent requests on two instances against a budget that allows 50 answers, and a
 * server killed (SIGKILL) between reserving and settling, whose reservation the next
 * instance releases.
 */
import { describe, expect } from 'vitest';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { until } from '../helpers/sse.js';
import { chat, type TestServer } from '../helpers/test-server.js';

/**
 * "Hal" is 1 token by the estimator and answers are capped at 1: each turn reserves 2, and
 * the fake upstream reports 1 + 1, so each settles at 2 and 100 tokens allow exactly 50.
 */
const PLANS = 'standard=1000,tok=1000/month+100tokens/month+1tokens/answer';

async function tokensUsed(server: TestServer, id: string): Promise<number> {
  const month = server.services.quota.monthOf(Date.now()).month;
  return (await server.services.tokens.forKey(id)).find((row) => row.month === month)?.used ?? 0;
}

describe('token budgets on two instances sharing PostgreSQL', () => {
  test('answer exactly 50 of 200 concurrent requests, never pass the budget, and leave nothing open', async ({
    upstream,
    serve,
    onTestFinished,
  }) => {
    const owner = await serve({ env: openAiEnv(upstream, { PLAUDER_PLANS: PLANS }) });
    const { id, key } = await owner.createKey({ plan: 'tok' });
    const instances: ServerProcess[] = await Promise.all([
      startServerProcess(owner.env),
      startServerProcess(owner.env),
    ]);
    onTestFinished(async () => {
      await Promise.all(instances.map((instance) => instance.stop()));
    });

    // Settled and reserved tokens together never pass the budget, whenever they are read.
    let highest = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        highest = Math.max(highest, await tokensUsed(owner, id));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        chat(instances[i % 2] as ServerProcess, key, { message: 'Hal' }),
      ),
    );
    sampling = false;
    await sampler;

    const replies = answers.filter((res) => res.status === 200 && res.json?.error === undefined);
    const refused = answers.filter(
      (res) => res.status === 429 && res.json?.error?.code === 'token_budget_exceeded',
    );
    expect(answers.length - replies.length - refused.length).toBe(0);
    expect(replies).toHaveLength(50);
    expect(refused).toHaveLength(150);
    expect(highest).toBeLessThanOrEqual(100);
    await until(
      async () => ((await owner.services.tokens.open(id)) === 0 ? true : undefined),
      'every reservation to be settled',
    );
    expect(await tokensUsed(owner, id)).toBe(100);
    // Refused turns are not counted against the month's requests.
    const month = owner.services.quota.monthOf(Date.now()).month;
    expect(await owner.services.usage.used(id, month)).toBe(50);
  }, 120_000);

  test('release at restart the reservation of a server killed between reserve and settle (a 2 s core deadline so that it expires soon)', async ({
    upstream,
    serve,
    onTestFinished,
  }) => {
    const owner = await serve({ env: openAiEnv(upstream, { PLAUDER_PLANS: PLANS }) });
    const { id, key } = await owner.createKey({ plan: 'tok' });
    const env = { ...owner.env, PLAUDER_CORE_TIMEOUT: '2s' };
    const doomed = await startServerProcess(env);
    onTestFinished(async () => {
      await doomed.stop('SIGKILL');
    });

    await upstream.script({ hang: true });
    const request = chat(doomed, key, { message: 'Hal' }).catch((error: unknown) => error);
    await until(
      async () => ((await upstream.received()).requests.length > 0 ? true : undefined),
      'the upstream to receive the request',
    );
    expect(await owner.services.tokens.open(id)).toBe(1);
    expect(await tokensUsed(owner, id)).toBe(2);
    await doomed.stop('SIGKILL');
    await request;
    // Nothing settles it: its instance is gone.
    expect(await owner.services.tokens.open(id)).toBe(1);

    const restarted = await startServerProcess(env);
    onTestFinished(async () => {
      await restarted.stop();
    });
    await until(
      async () => ((await owner.services.tokens.open(id)) === 0 ? true : undefined),
      'the restarted instance to release the expired reservation',
      60_000,
    );
    expect(await tokensUsed(owner, id)).toBe(0);
    // The next turn has the whole budget again.
    const next = await chat(restarted, key, { message: 'Hal' });
    expect(next.status).toBe(200);
  }, 120_000);
});
