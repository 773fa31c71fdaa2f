/**
 * The OpenAI core's upstream failing under load, with a real server process in front of a
 * real upstream process (test/fixtures/openai-upstream.mjs). Single failures of each kind
 * are in test/core/openai/openai-over-http.test.ts; here: the upstream killed and
 * restarted mid-load, and many concurrent failures with memory and handles measured.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startUpstream,
  type Upstream,
  type UpstreamStep,
} from '../core/openai/upstream-process.js';
import type { ServerProcess } from '../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { chatRequest, createHttpClient, isReply, type RawResponse } from './support/http-client.js';
import { collectGarbage, mb, processFigures } from './support/process-stats.js';
import {
  createKeyWithCli,
  once,
  sleep,
  startMeasuredServer,
  usedOf,
} from './support/server-process.js';

const CORE_FAILURES = ['core_unavailable', 'core_timeout'];

let upstream: Upstream;
let database: TestDatabase;
let server: ServerProcess;
let env: Record<string, string>;

beforeAll(async () => {
  upstream = await startUpstream();
  database = await createTestDatabase();
  env = {
    ...database.env,
    PLAUDER_CORE: 'openai',
    PLAUDER_OPENAI_BASE_URL: upstream.baseUrl,
    PLAUDER_OPENAI_MODEL: 'test-model',
    PLAUDER_OPENAI_API_KEY: 'sk-upstream-secret',
    // Long enough for a loaded 2-core machine, short enough for hanging attempts.
    PLAUDER_OPENAI_TIMEOUT: '1s',
    PLAUDER_OPENAI_MAX_RETRIES: '1',
    PLAUDER_OPENAI_RETRY_BASE_DELAY: '10ms',
    PLAUDER_OPENAI_RETRY_MAX_DELAY: '50ms',
    // Every failure reaches the upstream and recovery follows the restart at once: the
    // circuit breaker, which would answer most of them 503 without an upstream call and wait
    // its cooldown after the restart, is kept closed here (it is tested in
    // test/core/openai/openai-upstreams.test.ts).
    PLAUDER_OPENAI_BREAKER_FAILURES: '1000000',
  };
  server = await startMeasuredServer(env);
});
afterAll(async () => {
  await server?.stop();
  await upstream?.stop();
  await database?.drop();
});

/** Polls until `done()`, failing after 15 s. */
async function until(done: () => boolean): Promise<void> {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > 15_000) throw new Error('condition not reached within 15 s');
    await sleep(20);
  }
}

/** A 500 as the contract wants it: the envelope with a core code and nothing else. */
function expectCoreFailure(res: RawResponse): void {
  expect(res.status, res.text).toBe(500);
  expect(res.json).toEqual({
    error: {
      code: expect.any(String),
      message: expect.any(String),
      requestId: res.headers['x-request-id'],
    },
  });
  expect(CORE_FAILURES).toContain(res.json.error.code);
  expect(res.text).not.toMatch(/sk-upstream|reply to|<html|at \w+ \(/);
}

describe('when the upstream process is killed and restarted mid-load', () => {
  it('answers 500 while it is gone, counts exactly the replies, stays up and recovers on its own (breaker kept closed)', async () => {
    const { key } = await createKeyWithCli(env);
    const client = createHttpClient(server.url, 20);
    let phase: 'before' | 'down' | 'after' = 'before';
    let stop = false;
    const answers: Array<{ sentIn: string; gotIn: string; at: number; res: RawResponse }> = [];
    const transportErrors: string[] = [];

    const clients = Array.from({ length: 20 }, async (_, c) => {
      for (let n = 0; !stop; n++) {
        const sentIn = phase;
        try {
          const res = await client.send(chatRequest(key, { message: `c${c} n${n}` }));
          answers.push({ sentIn, gotIn: phase, at: Date.now(), res });
        } catch (error) {
          transportErrors.push((error as Error).message);
          return; // the service itself must never drop a connection here
        }
      }
    });

    const settled = (p: string, enough: number) =>
      answers.filter((a) => a.sentIn === p && a.gotIn === p).length >= enough;
    let health: RawResponse;
    let restartedAt: number;
    let recoveredMs: number;
    try {
      await until(() => settled('before', 50));
      await upstream.kill();
      phase = 'down';
      await until(() => settled('down', 50));
      health = await once(server.url, 'GET', '/healthz');
      const port = upstream.port;
      restartedAt = Date.now();
      upstream = await startUpstream(port);
      phase = 'after';
      await until(
        () => answers.filter((a) => a.sentIn === 'after' && isReply(a.res)).length >= 100,
      );
      recoveredMs = Date.now() - restartedAt;
    } finally {
      stop = true;
      await Promise.all(clients);
      client.close();
    }

    const inPhase = (p: string) => answers.filter((a) => a.sentIn === p && a.gotIn === p);
    const replies = answers.filter((a) => isReply(a.res)).length;
    const failures = answers.filter((a) => !isReply(a.res));
    const sentAfter = answers.filter((a) => a.sentIn === 'after');
    const firstReplyMs =
      Math.min(...sentAfter.filter((a) => isReply(a.res)).map((a) => a.at)) - restartedAt;
    const used = await usedOf(server.url, key);
    console.log(
      `[upstream killed] ${answers.length} answers: ${replies} replies, ${failures.length} × 500 ` +
        `(before ${inPhase('before').length}, down ${inPhase('down').length}, after ${inPhase('after').length}); ` +
        `after the restart: first reply in ${firstReplyMs} ms, 100 replies in ${recoveredMs} ms, ` +
        `${sentAfter.filter((a) => !isReply(a.res)).length} failures; counted ${used}`,
    );

    expect(transportErrors).toEqual([]);
    expect(health.status).toBe(200);
    for (const failure of failures) expectCoreFailure(failure.res);
    expect(inPhase('before').filter((a) => isReply(a.res)).length).toBeGreaterThan(0);
    // Sent and answered while the upstream was gone: every one of them failed closed.
    expect(inPhase('down').length).toBeGreaterThan(0);
    expect(inPhase('down').every((a) => a.res.status === 500)).toBe(true);
    // Recovered: the pool dropped the dead sockets and the last answer of each client is a reply.
    expect(answers.filter((a) => a.sentIn === 'after' && isReply(a.res)).length).toBeGreaterThan(
      99,
    );
    expect(answers.slice(-20).every((a) => isReply(a.res))).toBe(true);
    // Exactly the replies are counted: every failure was refunded.
    expect(used).toBe(replies);
  }, 40_000);
});

describe('many concurrent upstream failures', () => {
  /** Idle pooled upstream connections close after 4 s (src/core/http/upstream-client.ts). */
  const POOL_IDLE_MS = 4_600;
  const WAVES = 5;
  const PER_WAVE = 200;
  const KINDS: UpstreamStep[] = [
    { status: 500 },
    { status: 429 },
    { status: 503, raw: '<html>Service Unavailable</html>' },
    { raw: '{"choices": "garbage"', contentType: 'application/json' },
    { hang: true },
    { close: true },
  ];

  it('answers each with 500, counts none, and leaves memory, sockets and handles where they were (breaker kept closed)', async () => {
    const { key } = await createKeyWithCli(env);
    const pid = server.child.pid ?? 0;
    const client = createHttpClient(server.url, 50);
    const burst = (n: number, tag: string) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          client.send(chatRequest(key, { message: `${tag} ${i}` })),
        ),
      );

    // Warm up: connections, pools, JIT, prepared statements.
    await upstream.reset();
    const warm = await burst(PER_WAVE, 'warm');
    expect(warm.every(isReply)).toBe(true);
    // Both figures are taken once the pooled upstream connections have gone idle and
    // closed (after 4 s): how many the pool held at that moment is not what is measured.
    await sleep(POOL_IDLE_MS);
    await collectGarbage(pid);
    const before = await processFigures(pid, server.url);

    const codes = new Map<string, number>();
    const waveMs: number[] = [];
    for (let wave = 0; wave < WAVES; wave++) {
      // Two attempts per request (maxRetries 1), with room to spare: every attempt fails.
      const steps = Array.from(
        { length: Math.ceil(PER_WAVE * 2.5) },
        (_, i) => KINDS[i % KINDS.length] as UpstreamStep,
      );
      await upstream.script(...steps);
      const started = Date.now();
      const answers = await burst(PER_WAVE, `wave ${wave}`);
      waveMs.push(Date.now() - started);
      for (const res of answers) {
        expectCoreFailure(res);
        codes.set(res.json.error.code, (codes.get(res.json.error.code) ?? 0) + 1);
      }
      await upstream.reset();
    }
    await sleep(POOL_IDLE_MS);
    await collectGarbage(pid);
    const after = await processFigures(pid, server.url);
    const healthy = await burst(50, 'healthy');
    client.close();

    console.log(
      `[upstream failures] ${WAVES} waves × ${PER_WAVE} concurrent: ${[...codes].map(([c, n]) => `${n} ${c}`).join(', ')}; ` +
        `wave ms ${waveMs.join('/')}; heap ${mb(before.heapUsed)} → ${mb(after.heapUsed)}, ` +
        `rss ${mb(before.rss)} → ${mb(after.rss)}, fds ${before.fds} → ${after.fds}, ` +
        `handles ${before.handles} → ${after.handles}`,
    );

    expect(healthy.every(isReply)).toBe(true);
    expect(await usedOf(server.url, key)).toBe(PER_WAVE + 50);
    // Nothing piles up: sockets, handles and heap return to where they were (GC'd both times).
    expect(after.fds - before.fds).toBeLessThanOrEqual(10);
    expect(after.handles - before.handles).toBeLessThanOrEqual(10);
    expect(after.heapUsed - before.heapUsed).toBeLessThan(8 * 1024 * 1024);
    expect(after.rss - before.rss).toBeLessThan(64 * 1024 * 1024);
  }, 60_000);
});
