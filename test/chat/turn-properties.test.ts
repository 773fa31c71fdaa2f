/**
 * A property over random interleavings of new turns, idempotent retries, client hang-ups,
 * core failures and replies, all on one session of a real server: whatever happens,
 * replies delivered = the month's `used` = turns stored, and a replay is the reply it
 * repeats.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatedCore, type GatedCall } from '../helpers/gated-core.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

type Action =
  | { kind: 'start'; idempotent: boolean }
  | { kind: 'retry'; of: number }
  | { kind: 'release' | 'fail' | 'hang_up'; of: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ kind: fc.constant('start' as const), idempotent: fc.boolean() }),
  fc.record({ kind: fc.constant('retry' as const), of: fc.nat() }),
  fc.record({
    kind: fc.constantFrom('release' as const, 'fail' as const, 'hang_up' as const),
    of: fc.nat(),
  }),
);

interface Sent {
  readonly idempotencyKey: string | undefined;
  readonly body: string;
  readonly controller: AbortController;
  readonly response: Promise<{ status: number; replayed: boolean; json: any } | 'hung_up'>;
  call?: GatedCall;
}

const core = createGatedCore();
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ core, env: { PLAUDER_SESSION_WINDOW: '1000' } });
});
afterAll(() => server.close());

async function until(probe: () => Promise<boolean>, what: () => string) {
  const deadline = Date.now() + 5_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function run(actions: Action[]) {
  const { id, key } = await server.createKey();
  const sent: Sent[] = [];
  let failures = 0;

  const send = (idempotencyKey: string | undefined, body: string) => {
    const controller = new AbortController();
    const response = fetch(`${server.url}/api/chat`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/json',
        ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
      },
      body,
      signal: controller.signal,
    }).then(
      async (res) => ({
        status: res.status,
        replayed: res.headers.get('idempotent-replayed') === 'true',
        json: await res.json(),
      }),
      () => 'hung_up' as const,
    );
    const entry: Sent = { idempotencyKey, body, controller, response };
    sent.push(entry);
    // Wait until the request is answered or its turn reached the core. Requests are sent
    // one at a time, so the next core call is this request's, unless it was answered first.
    let answered = false;
    void response.then(() => {
      answered = true;
    });
    const calls = core.calls.length;
    return Promise.race([
      response,
      core.waitForCalls(calls + 1).then(() => {
        if (!answered) entry.call = core.calls[calls];
      }),
    ]);
  };
  const pending = () => sent.filter((s) => s.call && !s.call.settled);

  for (const [step, a] of actions.entries()) {
    if (a.kind === 'start') {
      const body = JSON.stringify({ message: `turn ${step}`, sessionId: 'shared' });
      await send(a.idempotent ? `idem-${step}` : undefined, body);
    } else if (a.kind === 'retry') {
      const earlier = sent.filter((s) => s.idempotencyKey !== undefined);
      const original = earlier[a.of % Math.max(1, earlier.length)];
      if (original) await send(original.idempotencyKey, original.body);
    } else {
      const target = pending()[a.of % Math.max(1, pending().length)];
      if (!target?.call) continue;
      if (a.kind === 'release') target.call.release(`reply ${step}`);
      if (a.kind === 'fail') {
        failures++;
        target.call.fail();
      }
      if (a.kind === 'hang_up') {
        target.controller.abort();
        await core.waitForAbort(target.call);
      }
    }
  }
  for (const s of pending()) s.call?.release('late reply');
  const responses = await Promise.all(sent.map((s) => s.response));

  const answered = responses.filter((r) => r !== 'hung_up');
  const delivered = answered.filter((r) => r.status === 200 && !r.replayed && !r.json.error);
  expect(answered.filter((r) => r.status === 500)).toHaveLength(failures);
  expect(answered.every((r) => [200, 409, 500].includes(r.status))).toBe(true);
  // A replay repeats the reply of the request that first used its key.
  for (const [i, r] of responses.entries()) {
    if (r === 'hung_up' || !r.replayed) continue;
    const first = responses.find(
      (o, j) =>
        o !== 'hung_up' &&
        !o.replayed &&
        o.status === 200 &&
        sent[j]?.idempotencyKey === sent[i]?.idempotencyKey,
    );
    expect(first !== 'hung_up' && first?.json).toEqual(r.json);
  }

  // Refunds of hung-up turns may still be on their way: wait for them, not for time.
  const month = server.services.quota.monthOf(Date.now()).month;
  const used = () => server.services.usage.used(id, month);
  const stored = async () =>
    (await server.services.sessions.read(id, 'shared', Date.now()))?.length ?? 0;
  await until(
    async () => (await used()) === delivered.length && (await stored()) === delivered.length,
    () => `delivered ${delivered.length}, used and stored differ`,
  );
}

describe('random interleavings of turns, retries, hang-ups and failures on one session', () => {
  it('always deliver exactly as many replies as are counted and stored', async () => {
    await fc.assert(fc.asyncProperty(fc.array(action, { minLength: 4, maxLength: 30 }), run), {
      numRuns: 30,
    });
  });
});
