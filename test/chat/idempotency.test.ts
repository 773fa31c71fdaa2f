/**
 * Idempotent retries (docs/contract.md, "Idempotent retries") on a real server: kept replies replayed byte for
 * byte and never counted, 409 while the first request runs, 422 for another body or
 * endpoint, soft errors, failures and refusals not kept (no row), the TTL on a controllable clock, and nothing
 * in clear in the database.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createGatedCore, type GatedCore } from '../helpers/gated-core.js';
import { http, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const DAY_MS = 24 * 60 * 60 * 1000;

async function setUp(options: { env?: Record<string, string>; core?: GatedCore } = {}) {
  let now = Date.UTC(2026, 10, 23, 12);
  const core = options.core ?? createGatedCore();
  const env = { PLAUDER_PLANS: 'standard=1000', ...options.env };
  const started = await startTestServer({ env, core, clock: () => now });
  server = started;
  const { id, key } = await started.createKey();
  const send = (
    idempotencyKey: string | undefined,
    body: unknown,
    path = '/api/chat',
    apiKey = key,
  ) =>
    http(`${started.url}${path}`, {
      key: apiKey,
      body,
      headers: idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey },
    });
  return {
    server: started,
    core,
    id,
    key,
    send,
    used: () => started.services.usage.used(id, started.services.quota.monthOf(now).month),
    advance: (ms: number) => {
      now += ms;
    },
    /** Releases every core call as soon as it arrives. */
    autoRelease: () => {
      const original = core.reply.bind(core);
      core.reply = (request) => {
        const reply = original(request);
        core.calls.at(-1)?.release();
        return reply;
      };
    },
  };
}

describe('Idempotency-Key', () => {
  it('replays the first reply byte for byte, with Idempotent-Replayed, without counting, calling the core or storing a turn', async () => {
    const t = await setUp();
    t.autoRelease();
    const body = { message: 'Wie viele Anfragen habe ich?', sessionId: 's1' };
    const first = await t.send('retry-1', body);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const again = await t.send('retry-1', body);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-ratelimit-remaining')).toBe('999');
    expect(t.core.calls).toHaveLength(1);
    expect(await t.used()).toBe(1);
    const session = await http(`${t.server.url}/api/sessions/s1`, { key: t.key });
    expect(session.json.turns).toHaveLength(1);
  });

  it('treats a quoted key like the bare one', async () => {
    const t = await setUp();
    t.autoRelease();
    const first = await t.send('abc-123', { message: 'Hallo' });
    const again = await t.send('"abc-123"', { message: 'Hallo' });
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('replays a reply even when the month is used up since; a soft error is not kept and is answered afresh', async () => {
    const t = await setUp({ env: { PLAUDER_PLANS: 'standard=1' } });
    t.autoRelease();
    const soft = await t.send('soft', { message: '   ' });
    expect(soft.json.error.code).toBe('message_missing');
    const reply = await t.send('reply', { message: 'Hallo' });
    expect(reply.status).toBe(200);
    // The month is used up now: a new request is refused, the kept reply is replayed.
    expect((await t.send(undefined, { message: 'Hallo' })).status).toBe(429);
    const again = await t.send('reply', { message: 'Hallo' });
    expect(again.status).toBe(200);
    expect(again.text).toBe(reply.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('x-ratelimit-remaining')).toBe('0');
    // The soft error's retry is decided as a new request: the month is used up now.
    const softAgain = await t.send('soft', { message: '   ' });
    expect(softAgain.status).toBe(429);
    expect(softAgain.headers.get('idempotent-replayed')).toBeNull();
    expect(await t.used()).toBe(1);
  });

  it('does not keep plan_inactive: once the plan is active, the retry runs and is counted', async () => {
    const t = await setUp();
    t.autoRelease();
    await t.server.services.keys.update(t.id, { active: false });
    const first = await t.send('k', { message: 'Hallo' });
    expect(first.json.error.code).toBe('plan_inactive');
    const during = await t.send('k', { message: 'Hallo' });
    expect(during.text).toBe(first.text);
    expect(during.headers.get('idempotent-replayed')).toBeNull();
    await t.server.services.keys.update(t.id, { active: true });
    const again = await t.send('k', { message: 'Hallo' });
    expect(again.json).toEqual({ reply: 'reply to: Hallo' });
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(t.core.calls).toHaveLength(1);
    expect(await t.used()).toBe(1);
  });

  it('keeps no row for soft errors and refusals: 1000 new keys of a deactivated key, new keys of an empty message and of a used-up month', async () => {
    const t = await setUp({ env: { PLAUDER_PLANS: 'standard=1' } });
    t.autoRelease();
    const rows = async () =>
      Number(
        (
          await t.server.services.store.db
            .selectFrom('idempotency_keys')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const burst = async (
      prefix: string,
      body: unknown,
      status: number,
      code: string,
      count: number,
    ) => {
      for (let batch = 0; batch < count; batch += 50) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, i) => t.send(`${prefix}-${batch + i}`, body)),
        );
        for (const res of answers) {
          expect(res.status).toBe(status);
          expect(res.json.error.code).toBe(code);
        }
      }
    };
    await t.server.services.keys.update(t.id, { active: false });
    await burst('inactive', { message: 'Hallo' }, 200, 'plan_inactive', 1000);
    expect(await rows()).toBe(0);
    await t.server.services.keys.update(t.id, { active: true });
    await burst('empty', { message: '' }, 200, 'message_missing', 200);
    expect(await rows()).toBe(0);
    expect((await t.send(undefined, { message: 'Hallo' })).status).toBe(200);
    await burst('refused', { message: 'Hallo' }, 429, 'quota_exceeded', 200);
    expect(await rows()).toBe(0);
    expect(t.core.calls).toHaveLength(1);
    expect(await t.used()).toBe(1);
  });

  it('refuses the same key with another body or another endpoint: 422 idempotency_key_reused', async () => {
    const t = await setUp();
    t.autoRelease();
    expect((await t.send('k', { message: 'Hallo' })).status).toBe(200);
    for (const res of [
      await t.send('k', { message: 'Hallo!' }),
      await t.send('k', { message: 'Hallo', sessionId: 'x' }),
      await t.send('k', { message: 'Hallo' }, '/api/chat-en'),
    ]) {
      expect(res.status).toBe(422);
      expect(res.json.error.code).toBe('idempotency_key_reused');
    }
    expect(await t.used()).toBe(1);
    expect(t.core.calls).toHaveLength(1);
  });

  it('answers 409 with Retry-After: 1 while the first request runs, then replays it', async () => {
    const t = await setUp();
    const first = t.send('slow', { message: 'Hallo' });
    await t.core.waitForCalls(1);
    const during = await t.send('slow', { message: 'Hallo' });
    expect(during.status).toBe(409);
    expect(during.json.error.code).toBe('idempotency_key_in_flight');
    expect(during.headers.get('retry-after')).toBe('1');
    // Another body while it runs is still another body.
    expect((await t.send('slow', { message: 'Hallo?' })).status).toBe(422);

    t.core.calls[0]?.release('Guten Tag');
    expect((await first).json).toEqual({ reply: 'Guten Tag' });
    const after = await t.send('slow', { message: 'Hallo' });
    expect(after.json).toEqual({ reply: 'Guten Tag' });
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect(await t.used()).toBe(1);
  });

  it('does not keep failures: a retry after a 500 runs afresh and is counted once', async () => {
    const t = await setUp();
    const failed = t.send('f', { message: 'Hallo', sessionId: 's' });
    await t.core.waitForCalls(1);
    t.core.calls[0]?.fail();
    expect((await failed).status).toBe(500);
    expect(await t.used()).toBe(0);

    const retry = t.send('f', { message: 'Hallo', sessionId: 's' });
    await t.core.waitForCalls(2);
    t.core.calls[1]?.release('zweiter Versuch');
    const res = await retry;
    expect(res.json).toEqual({ reply: 'zweiter Versuch' });
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(await t.used()).toBe(1);
    const session = await http(`${t.server.url}/api/sessions/s`, { key: t.key });
    expect(session.json.turns.map((turn: { reply: string }) => turn.reply)).toEqual([
      'zweiter Versuch',
    ]);
  });

  it('lets a retry take over a claim whose lease ran out, with its unit: counted once, and the first attempt refunds nothing when it fails late', async () => {
    // The longest lease: its renewals (every third of it, in real time) do not come during
    // the test, so the claim runs out on the test's clock as a dead process's would.
    const t = await setUp({
      env: { PLAUDER_IDEMPOTENCY_LEASE: '10m', PLAUDER_PLANS: 'standard=1000/month+5/minute' },
    });
    const first = t.send('lost', { message: 'Hallo' });
    await t.core.waitForCalls(1);
    expect(await t.used()).toBe(1);
    expect((await t.send('lost', { message: 'Hallo' })).status).toBe(409);

    t.advance(10 * 60 * 1000);
    const retry = t.send('lost', { message: 'Hallo' });
    await t.core.waitForCalls(2);
    expect(await t.used()).toBe(1);
    t.core.calls[0]?.fail();
    expect((await first).status).toBe(500);
    expect(await t.used()).toBe(1);
    t.core.calls[1]?.release('der zweite Versuch');
    const answered = await retry;
    expect(answered.json).toEqual({ reply: 'der zweite Versuch' });
    // Neither the month nor the retry's minute counted it again.
    expect(answered.headers.get('ratelimit')).toMatch(/"monthly";r=999;.*"minute";r=5;/);
    expect(await t.used()).toBe(1);
    const again = await t.send('lost', { message: 'Hallo' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await t.used()).toBe(1);
  });

  it('gives the unit back with the claim when the request that took it over fails; the first attempt refunds nothing', async () => {
    const t = await setUp({ env: { PLAUDER_IDEMPOTENCY_LEASE: '10m' } });
    const other = t.send(undefined, { message: 'ohne Schlüssel' });
    await t.core.waitForCalls(1);
    t.core.calls[0]?.release();
    expect((await other).status).toBe(200);
    const first = t.send('given-up', { message: 'Hallo' });
    await t.core.waitForCalls(2);
    t.advance(10 * 60 * 1000);
    const second = t.send('given-up', { message: 'Hallo' });
    await t.core.waitForCalls(3);
    expect(await t.used()).toBe(2);
    // The request holding the unit now fails: the unit goes back with its claim, once.
    t.core.calls[2]?.fail();
    expect((await second).status).toBe(500);
    expect(await t.used()).toBe(1);
    t.core.calls[1]?.fail();
    expect((await first).status).toBe(500);
    expect(await t.used()).toBe(1);
    t.autoRelease();
    expect((await t.send('given-up', { message: 'Hallo' })).status).toBe(200);
    expect(await t.used()).toBe(2);
  });

  it('does not keep a 429: after the reset the same key runs afresh', async () => {
    const t = await setUp({ env: { PLAUDER_PLANS: 'standard=1' } });
    t.autoRelease();
    expect((await t.send(undefined, { message: 'eins' })).status).toBe(200);
    expect((await t.send('later', { message: 'zwei' })).status).toBe(429);
    t.advance(9 * DAY_MS); // 2026-12-02: a new month
    const res = await t.send('later', { message: 'zwei' });
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
  });

  it('keeps an outcome for PLAUDER_IDEMPOTENCY_TTL, then runs the key afresh; the sweep deletes it', async () => {
    const t = await setUp({ env: { PLAUDER_IDEMPOTENCY_TTL: '1h' } });
    t.autoRelease();
    const first = await t.send('ttl', { message: 'Hallo' });
    t.advance(60 * 60 * 1000 - 1);
    expect((await t.send('ttl', { message: 'Hallo' })).headers.get('idempotent-replayed')).toBe(
      'true',
    );
    t.advance(1);
    const fresh = await t.send('ttl', { message: 'Hallo' });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    expect(first.status).toBe(200);
    expect(t.core.calls).toHaveLength(2);
    expect(await t.used()).toBe(2);

    const { idempotency, clock } = t.server.services;
    expect(await idempotency.sweep(clock())).toBe(0);
    t.advance(60 * 60 * 1000 + 1);
    expect(await idempotency.sweep(clock())).toBe(1);
  });

  it('scopes keys to the API key: another key with the same Idempotency-Key runs on its own', async () => {
    const t = await setUp();
    t.autoRelease();
    const other = await t.server.createKey();
    const mine = await t.send('shared', { message: 'Hallo' });
    const theirs = await t.send('shared', { message: 'Hallo' }, '/api/chat', other.key);
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(mine.headers.get('idempotent-replayed')).toBeNull();
    expect(t.core.calls).toHaveLength(2);
  });

  it('refuses an empty, overlong or non-printable key with 400 idempotency_key_invalid, after the key check', async () => {
    const t = await setUp();
    t.autoRelease();
    const bad = ['', ' ', 'x'.repeat(256), '"unclosed', '"a"b"', '""'];
    for (const value of bad) {
      const res = await t.send(value, { message: 'Hallo' });
      expect(res.status, JSON.stringify(value)).toBe(400);
      expect(res.json.error.code).toBe('idempotency_key_invalid');
    }
    for (const bytes of ['k\x01ey', 'k\x7fey', 'kéy', 'k\tey']) {
      const status = await rawStatus(t.server.url, t.key, bytes);
      expect(status, JSON.stringify(bytes)).toMatch(/^HTTP\/1\.1 400/);
    }
    expect((await t.send('x'.repeat(255), { message: 'Hallo' })).status).toBe(200);
    // A bad API key is refused first.
    const unauthorised = await t.send('', { message: 'Hallo' }, '/api/chat', 'nope');
    expect(unauthorised.status).toBe(401);
    expect(await t.used()).toBe(1);
  });

  it('keeps an outcome as bytes on SQLite, as base64url text on PostgreSQL, and replays one kept as text on either', async () => {
    const t = await setUp();
    t.autoRelease();
    const body = { message: 'Hallo' };
    const first = await t.send('kept-1', body);
    expect(first.status).toBe(200);
    const db = t.server.services.store.db;
    const outcome = async () =>
      (await db.selectFrom('idempotency_keys').select('outcome').executeTakeFirstOrThrow()).outcome;
    const kept = await outcome();
    if (t.server.database.dialect === 'sqlite') {
      expect(Buffer.isBuffer(kept)).toBe(true);
      // As releases before kept it: the same bytes as base64url text.
      await db
        .updateTable('idempotency_keys')
        .set({ outcome: (kept as Buffer).toString('base64url') })
        .execute();
      expect(typeof (await outcome())).toBe('string');
    } else {
      expect(kept).toMatch(/^[A-Za-z0-9_-]+$/);
    }
    const again = await t.send('kept-1', body);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    expect(t.core.calls).toHaveLength(1);
  });

  it('stores neither the idempotency key nor the message or reply in clear', async () => {
    const t = await setUp();
    const idempotencyKey = 'canary-idem-7f3a9c';
    const message = 'canary message 5b1e77';
    const pending = t.send(idempotencyKey, { message });
    await t.core.waitForCalls(1);
    t.core.calls[0]?.release('canary reply 91c2d4');
    expect((await pending).status).toBe(200);
    const contents = await t.server.database.contents();
    for (const canary of [idempotencyKey, message, 'canary reply 91c2d4']) {
      expect(contents.includes(Buffer.from(canary)), `database contains ${canary}`).toBe(false);
    }
    expect(t.server.logs.join('\n')).not.toContain(idempotencyKey);
  });
});

/** Sends the header's bytes as they are (fetch refuses some of them). */
function rawStatus(url: string, key: string, value: string): Promise<string> {
  const { hostname, port } = new URL(url);
  const body = JSON.stringify({ message: 'Hallo' });
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(
        Buffer.concat([
          Buffer.from(
            `POST /api/chat HTTP/1.1\r\nhost: ${hostname}\r\nauthorization: Bearer ${key}\r\n` +
              `content-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n` +
              'idempotency-key: ',
          ),
          Buffer.from(value, 'latin1'),
          Buffer.from(`\r\n\r\n${body}`),
        ]),
      );
    });
    let head = '';
    socket.on('data', (data) => {
      head += data.toString('latin1');
    });
    socket.on('end', () => resolve(head.split('\r\n')[0] ?? ''));
    socket.on('error', reject);
  });
}
