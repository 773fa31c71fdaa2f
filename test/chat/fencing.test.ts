/**
 * Fencing (docs/contract.md, "The client goes away"; "Idempotent retries"): an attempt
 * whose `Idempotency-Key` claim was taken over after its lease ran out stores nothing,
 * keeps nothing and answers 409 `idempotency_key_in_flight`, so one request is answered by
 * the core at most once. Two real server processes on one database in front of the real
 * upstream process; the first is paused (SIGSTOP) past its lease, as a process stalled by
 * its host would be.
 */
import { describe, expect } from 'vitest';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { until } from '../helpers/sse.js';
import { http } from '../helpers/test-server.js';

describe('an attempt whose claim was taken over', () => {
  test('stores nothing, keeps nothing and answers 409 when its late reply comes (a 300 ms lease, so that the paused process loses its claim at once)', async ({
    upstream,
    serve,
    onTestFinished,
  }) => {
    // The first attempt's answer comes late; the retry's at once.
    await upstream.script(
      { content: 'die späte Antwort', delayMs: 1500 },
      { content: 'die Antwort' },
    );
    const owner = await serve({ env: openAiEnv(upstream, { PLAUDER_IDEMPOTENCY_LEASE: '300ms' }) });
    const { id, key } = await owner.createKey();
    const [paused, other] = (await Promise.all([
      startServerProcess(owner.env),
      startServerProcess(owner.env),
    ])) as [ServerProcess, ServerProcess];
    onTestFinished(async () => {
      await Promise.all([paused.stop(), other.stop()]);
    });
    // Runs first: a stopped process must go on to hear its SIGTERM.
    onTestFinished(() => {
      paused.child.kill('SIGCONT');
    });

    const send = (instance: ServerProcess) =>
      http(`${instance.url}/api/chat`, {
        key,
        headers: { 'idempotency-key': 'paused-attempt' },
        body: { message: 'Hallo', sessionId: 'fenced' },
      });
    const first = send(paused);
    await until(
      async () => ((await upstream.received()).requests.length === 1 ? true : undefined),
      'the first attempt to reach the upstream',
    );
    paused.child.kill('SIGSTOP');

    // The paused process renews its lease no more: the retry takes the claim over.
    const retry = await until(async () => {
      const answer = await send(other);
      return answer.status === 409 ? undefined : answer;
    }, 'the lease to run out');
    expect(retry.status).toBe(200);
    expect(retry.json).toEqual({ reply: 'die Antwort' });

    paused.child.kill('SIGCONT');
    const late = await first;
    expect(late.status).toBe(409);
    expect(late.json.error.code).toBe('idempotency_key_in_flight');
    expect(late.headers.get('retry-after')).toBe('1');

    // One turn stored, one outcome kept, counted once.
    const turns = await owner.services.sessions.read(id, 'fenced', Date.now());
    expect(turns?.map((turn) => turn.reply)).toEqual(['die Antwort']);
    const replay = await send(paused);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(retry.text);
    const month = owner.services.quota.monthOf(Date.now()).month;
    expect(await owner.services.usage.used(id, month)).toBe(1);
    expect((await upstream.received()).requests).toHaveLength(2);
  });
});
