/**
 * Honest bursts on the shipped defaults (docs/contract.md, "Burst limits"): one key's 50
 * requests at once, from `fetch`, the official `openai` client's `Promise.all` and
 * LangChain's `batch`, each on its default settings, against a slow upstream process: every
 * request is answered, and counted once. And a tenant of twenty keys, each running its cap,
 * cannot make another key's turn wait for the upstream.
 */
import { ChatOpenAI } from '@langchain/openai';
import OpenAI from 'openai';
import { describe, expect } from 'vitest';
import type { Upstream } from '../core/openai/upstream-process.js';
import { test as base, openAiEnv } from '../helpers/fixtures.js';
import { startServerProcess } from '../helpers/processes.js';
import { until } from '../helpers/sse.js';
import type { TestServer } from '../helpers/test-server.js';

/** How long the upstream takes for each answer: long against the clients' retry backoff. */
const SLOW_MS = 400;
const BURST = 50;

const test = base.extend(
  'gateway',
  async ({ serve, upstream }) =>
    async (): Promise<{ s: TestServer; up: Upstream; id: string; key: string }> => {
      const s = await serve({ env: openAiEnv(upstream, {}, { retries: 'shipped' }) });
      const { id, key } = await s.createKey();
      return { s, up: upstream, id, key };
    },
);

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

const slowSteps = (count: number) => Array.from({ length: count }, () => ({ delayMs: SLOW_MS }));

/** Every answer plauder gave on `route`, by status (each attempt of a client is one). */
function statuses(s: TestServer, route: string): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const text of s.logs) {
    const line = JSON.parse(text);
    if (line.msg !== 'request' || line.route !== route) continue;
    counts[line.status] = (counts[line.status] ?? 0) + 1;
  }
  return counts;
}

describe('one key, a burst of 50, on the shipped defaults', () => {
  test('fetch: 50 at once to /api/chat-en are all answered 200 and counted once each', async ({
    gateway,
  }) => {
    const { s, up, id, key } = await gateway();
    await up.script(...slowSteps(BURST));
    const answers = await Promise.all(
      Array.from({ length: BURST }, async (_, i) => {
        const response = await fetch(`${s.url}/api/chat-en`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ message: `question ${i}` }),
        });
        return { status: response.status, body: (await response.json()) as { reply: string } };
      }),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(BURST).fill(200));
    expect(new Set(answers.map((answer) => answer.body.reply)).size).toBe(BURST);
    expect(await used(s, id)).toBe(BURST);
    expect((await up.received()).requests).toHaveLength(BURST);
  });

  test("openai's Promise.all of 50 completions: all answered without a retry, counted once each", async ({
    gateway,
  }) => {
    const { s, up, id, key } = await gateway();
    await up.script(...slowSteps(BURST));
    const client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: key });
    const completions = await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        client.chat.completions.create({
          model: 'plauder-en',
          messages: [{ role: 'user', content: `question ${i}` }],
        }),
      ),
    );
    expect(completions.map((c) => c.choices[0]?.message.content)).toEqual(
      Array.from({ length: BURST }, (_, i) => `reply to: question ${i}`),
    );
    expect(statuses(s, '/v1/chat/completions')).toEqual({ 200: BURST });
    expect(await used(s, id)).toBe(BURST);
  });

  test("LangChain's batch of 50: all answered, counted once each", async ({ gateway }) => {
    const { s, up, id, key } = await gateway();
    await up.script(...slowSteps(BURST));
    const model = new ChatOpenAI({
      model: 'plauder-en',
      apiKey: key,
      configuration: { baseURL: `${s.url}/v1` },
    });
    const answers = await model.batch(Array.from({ length: BURST }, (_, i) => `question ${i}`));
    expect(answers.map((answer) => answer.content)).toEqual(
      Array.from({ length: BURST }, (_, i) => `reply to: question ${i}`),
    );
    expect(statuses(s, '/v1/chat/completions')).toEqual({ 200: BURST });
    expect(await used(s, id)).toBe(BURST);
  });
});

describe('a tenant of twenty keys running their cap', () => {
  test("cannot make another key's turn wait more than 200 ms for the upstream (a server process of its own)", async ({
    serve,
    upstream,
  }) => {
    // The keys are made through one server; the load goes to a server process of its own, so
    // that the test's 320 clients do not share its event loop.
    const owner = await serve({ env: openAiEnv(upstream, {}, { retries: 'shipped' }) });
    const other = await owner.createKey({ name: 'other' });
    const tenant = await Promise.all(
      Array.from({ length: 20 }, (_, k) => owner.createKey({ name: `tenant ${k}` })),
    );
    const server = await startServerProcess(owner.env);
    try {
      const perKey = 16;
      const total = tenant.length * perKey;
      // Long enough that the tenant's turns hold the upstream's 64 connections while the
      // other key asks.
      await upstream.script(...Array.from({ length: total + 1 }, () => ({ delayMs: 3_000 })));
      const ask = (key: string, message: string) =>
        fetch(`${server.url}/api/chat-en`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ message }),
        });
      const load = Array.from({ length: total }, (_, i) =>
        ask(tenant[i % tenant.length]?.key ?? '', `load ${i}`).then((response) => response.status),
      );
      // The tenant's turns fill the pool (all but the reserve its share leaves).
      await until(
        async () => ((await upstream.received()).requests.length >= 56 ? true : undefined),
        'the pool is busy',
      );
      const sentAt = Date.now();
      const answer = await ask(other.key, 'the other key');
      const { requests } = await upstream.received();
      const received = requests.find((r) => JSON.stringify(r.body).includes('the other key'));
      expect(answer.status).toBe(200);
      expect(received).toBeDefined();
      // What plauder made it wait, by its own log line: nothing, or well under 200 ms.
      await until(async () => server.output().includes(other.id) || undefined, 'logged');
      const line = JSON.parse(
        server
          .output()
          .split('\n')
          .find((text) => text.includes(other.id)) ?? '{}',
      );
      expect(line).toMatchObject({ outcome: 'reply', status: 200 });
      expect(line.waitMs ?? 0).toBeLessThan(200);
      // And as the client sees it (a wave of the tenant's turns takes 3 s).
      expect((received?.receivedAt ?? Number.POSITIVE_INFINITY) - sentAt).toBeLessThan(1_000);
      expect(await Promise.all(load)).toEqual(Array(total).fill(200));
    } finally {
      await server.stop();
    }
  });
});
