/**
 * The client goes away (docs/contract.md, "The client goes away"), and shutdown: the core is cancelled (a real
 * upstream process sees its request aborted), the reservation is refunded, nothing is
 * stored, no idempotent outcome is kept, and logs and metrics say `client_closed`.
 * Also: an Idempotency-Key's 409 and replay across two instances of one database.
 */
import { describe, expect } from 'vitest';
import { startUpstream, type Upstream } from '../core/openai/upstream-process.js';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { createGatedCore } from '../helpers/gated-core.js';
import { type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { until } from '../helpers/sse.js';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';

/** Sends a chat request and hangs up once the upstream has received it. */
async function hangUpWhileUpstreamThinks(
  server: TestServer,
  upstream: Upstream,
  key: string,
  headers: Record<string, string> = {},
) {
  const controller = new AbortController();
  const request = fetch(`${server.url}/api/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ message: 'Erzähl mir etwas Langes', sessionId: 'gone' }),
    signal: controller.signal,
  });
  const before = (await upstream.received()).requests.length;
  await until(
    async () => ((await upstream.received()).requests.length > before ? true : undefined),
    'the upstream to receive the request',
  );
  const hungUpAt = Date.now();
  controller.abort();
  await expect(request).rejects.toThrow();
  const aborted = await until(async () => {
    const last = (await upstream.received()).requests.at(-1);
    return last?.abortedAt;
  }, 'the upstream to see its request aborted');
  return { hungUpAt, abortedAt: aborted };
}

describe('a client that hangs up', () => {
  test('aborts the upstream request within a second, refunds, stores nothing and is logged as client_closed', async ({
    upstream,
    serve,
  }) => {
    await upstream.script({ hang: true });
    const server = await serve({ env: openAiEnv(upstream) });
    const { id, key } = await server.createKey();

    const { hungUpAt, abortedAt } = await hangUpWhileUpstreamThinks(server, upstream, key);
    console.log(
      `[hang-ups] the upstream saw the abort ${abortedAt - hungUpAt} ms after the hang-up`,
    );
    expect(abortedAt - hungUpAt).toBeLessThan(1000);

    const line = await until(
      async () => server.logs.find((l) => l.includes('"outcome":"client_closed"')),
      'the client_closed log line',
    );
    expect(JSON.parse(line)).toMatchObject({ route: '/api/chat', status: 499, keyId: id });
    const month = server.services.quota.monthOf(Date.now()).month;
    // Reserved before the core was called; the refund follows the cancellation.
    await until(
      async () => ((await server.services.usage.used(id, month)) === 0 ? true : undefined),
      'the refund',
    );
    expect(await server.services.sessions.read(id, 'gone', Date.now())).toBeUndefined();
    const metrics = await http(`${server.url}/metrics`);
    expect(metrics.text).toMatch(
      /plauder_chat_outcomes_total\{endpoint="\/api\/chat",outcome="client_closed"\} 1/,
    );
    expect(server.logs.join('\n')).not.toContain('Erzähl mir');

    // The service goes on: the next request is answered and counted once.
    const next = await chat(server, key, { message: 'Hallo', sessionId: 'gone' });
    expect(next.json).toEqual({ reply: 'reply to: Hallo' });
    expect(await server.services.usage.used(id, month)).toBe(1);
  });

  test('keeps no idempotent outcome: a retry with the same key runs afresh', async ({
    upstream,
    serve,
  }) => {
    await upstream.script({ hang: true });
    const server = await serve({ env: openAiEnv(upstream) });
    const { id, key } = await server.createKey();
    await hangUpWhileUpstreamThinks(server, upstream, key, { 'idempotency-key': 'retry-me' });

    const month = server.services.quota.monthOf(Date.now()).month;
    // The claim is released with the refund; wait for it rather than for time.
    const retry = await until(async () => {
      const res = await http(`${server.url}/api/chat`, {
        key,
        headers: { 'idempotency-key': 'retry-me' },
        body: { message: 'Erzähl mir etwas Langes', sessionId: 'gone' },
      });
      return res.status === 409 ? undefined : res;
    }, 'the claim to be released');
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(await server.services.usage.used(id, month)).toBe(1);
    const turns = await server.services.sessions.read(id, 'gone', Date.now());
    expect(turns?.map((t) => t.message)).toEqual(['Erzähl mir etwas Langes']);
  });
});

describe('shutdown', () => {
  test('cancels turns still waiting for the core after the drain time: refunded, answered 500, nothing stored', async () => {
    const core = createGatedCore();
    const server = await startTestServer({ core, app: { turnDrainMs: 200 } });
    const { id, key } = await server.createKey();
    const month = server.services.quota.monthOf(Date.now()).month;

    const finishing = chat(server, key, { message: 'rechtzeitig' });
    const stuck = chat(server, key, { message: 'zu spät', sessionId: 'late' });
    await core.waitForCalls(2);
    const closing = server.app.close();
    core.calls.find((call) => call.request.message === 'rechtzeitig')?.release('fertig');

    expect((await finishing).json).toEqual({ reply: 'fertig' });
    const late = await stuck;
    expect(late.status).toBe(500);
    expect(late.json.error.code).toBe('core_unavailable');
    await closing;
    expect(await server.services.usage.used(id, month)).toBe(1);
    expect(await server.services.sessions.read(id, 'late', Date.now())).toBeUndefined();
    await server.services.store.close();
    await server.database.drop();
  });
});

describe('an Idempotency-Key across two instances of one database', () => {
  // This test stops and restarts its upstream: it has one of its own (see fixtures.ts).
  test('gets 409 on the other instance while the first runs, then the same bytes replayed there', async ({
    serve,
    onTestFinished,
  }) => {
    const upstream = await startUpstream();
    onTestFinished(() => upstream.stop());
    await upstream.script({ delayMs: 60_000 });
    // The processes share the owner's database; they stop first (onTestFinished runs last
    // first), then the owner closes and drops it.
    const owner = await serve({ env: openAiEnv(upstream) });
    const { id, key } = await owner.createKey();
    const [a, b] = (await Promise.all([
      startServerProcess(owner.env),
      startServerProcess(owner.env),
    ])) as [ServerProcess, ServerProcess];
    onTestFinished(async () => {
      await Promise.all([a.stop(), b.stop()]);
    });

    const send = (instance: ServerProcess) =>
      http(`${instance.url}/api/chat-en`, {
        key,
        headers: { 'idempotency-key': 'two-instances' },
        body: { message: 'Hello there' },
      });
    // The first request's upstream call is slow; the second instance must not run it again.
    const first = send(a);
    await until(
      async () => ((await upstream.received()).requests.length === 1 ? true : undefined),
      'the first request to reach the upstream',
    );
    const during = await send(b);
    expect(during.status).toBe(409);
    expect(during.json.error.code).toBe('idempotency_key_in_flight');
    expect(during.headers.get('retry-after')).toBe('1');

    // Let the slow answer out: the upstream's next step is immediate, so restart it in place.
    await upstream.stop();
    const answered = await first;
    expect(answered.status).toBe(500);
    // A failure is not kept: the retry on the other instance runs afresh and is kept.
    const restarted = await startUpstream(upstream.port);
    onTestFinished(() => restarted.stop());
    const retry = await send(b);
    expect(retry.status).toBe(200);
    const replay = await send(a);
    expect(replay.text).toBe(retry.text);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    const month = owner.services.quota.monthOf(Date.now()).month;
    expect(await owner.services.usage.used(id, month)).toBe(1);
    expect((await restarted.received()).requests).toHaveLength(1);
  });
});
