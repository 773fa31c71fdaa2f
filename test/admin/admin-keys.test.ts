/**
 * The admin API's operations over HTTP, each checked against what a key holder then
 * sees on the public API: create, list, read, change, rotate, revoke, usage, plans.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { chat, http, misspelled, type TestServer } from '../helpers/test-server.js';
import { admin, sha256Hex, startAdminServer } from './admin-client.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const NOV_2026 = Date.UTC(2026, 10, 10, 12);

async function setup(now = NOV_2026) {
  const clock = { now };
  server = await startAdminServer({ clock: () => clock.now });
  return { s: server, clock };
}

const byName = <T extends { name: string }>(list: T[]): T[] =>
  [...list].sort((x, y) => x.name.localeCompare(y.name));

async function createKey(s: TestServer, body: Record<string, unknown>) {
  const res = await admin(s, 'keys', { body });
  expect(res.status, res.text).toBe(201);
  return res;
}

describe('POST /admin/v1/keys', () => {
  it('creates a key that works on /api/chat at once and shows the plaintext only in this answer', async () => {
    const { s } = await setup();
    const res = await createKey(s, { name: 'support bot', plan: 'plus' });
    expect(res.json).toEqual({
      id: expect.stringMatching(/^key_[0-9a-z]{16}$/),
      key: expect.stringMatching(/^plauder_[A-Za-z0-9]{38}$/),
      name: 'support bot',
      plan: 'plus',
      active: true,
      status: 'active',
      displayPrefix: res.json.key.slice(0, 12),
      createdAt: new Date(NOV_2026).toISOString(),
      updatedAt: new Date(NOV_2026).toISOString(),
      revokedAt: null,
      usage: {
        month: '2026-11',
        used: 0,
        limit: 5000,
        remaining: 5000,
        perMinute: null,
        tokens: null,
      },
    });
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);

    expect(res.text).not.toContain(sha256Hex(res.json.key));
    const reply = await chat(s, res.json.key, { message: 'Hallo' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-ratelimit-limit')).toBe('5000');

    const read = await admin(s, `keys/${res.json.id}`);
    expect(read.status).toBe(200);
    expect(read.json.usage).toEqual({
      month: '2026-11',
      used: 1,
      limit: 5000,
      remaining: 4999,
      perMinute: null,
      tokens: null,
    });
    expect(read.json).not.toHaveProperty('key');
    expect(read.text).not.toContain(res.json.key);
  });

  it('creates an inactive key whose requests get the soft error plan_inactive', async () => {
    const { s } = await setup();
    const res = await createKey(s, { name: 'later', plan: 'standard', active: false });
    expect(res.json).toMatchObject({ active: false, status: 'inactive' });
    const reply = await chat(s, res.json.key, { message: 'Hallo' });
    expect(reply.json.error.code).toBe('plan_inactive');
  });
});

describe('GET /admin/v1/keys and /admin/v1/keys/{id}', () => {
  it("lists every key with this month's usage, revoked ones included, without secrets", async () => {
    const { s } = await setup();
    const a = await createKey(s, { name: 'a', plan: 'standard' });
    const b = await createKey(s, { name: 'b', plan: 'plus' });
    for (let i = 0; i < 3; i++) await chat(s, a.json.key, { message: 'Hallo' });
    await chat(s, b.json.key, { message: 'Hi' }, '/api/chat-en');
    await chat(s, b.json.key, { message: '   ' }); // a soft error: not counted
    await admin(s, `keys/${b.json.id}/revoke`, { method: 'POST' });

    const res = await admin(s, 'keys');
    expect(res.status).toBe(200);
    expect(res.json.month).toBe('2026-11');
    expect(res.json.timeZone).toBe('UTC');
    // Keys created in the same millisecond (the test clock stands still) have no set order.
    const keys = byName<{ name: string }>(res.json.keys);
    expect(keys.map((k) => k.name)).toEqual(['a', 'b']);
    expect(keys[0]).toMatchObject({
      id: a.json.id,
      status: 'active',
      usage: { used: 3, limit: 1000, remaining: 997 },
    });
    expect(keys[1]).toMatchObject({
      id: b.json.id,
      status: 'revoked',
      active: false,
      revokedAt: expect.any(String),
      usage: { used: 1, limit: 5000, remaining: 4999 },
    });
    for (const key of res.json.keys) expect(key).not.toHaveProperty('key');
    for (const secret of [a.json.key, b.json.key]) {
      expect(res.text).not.toContain(secret);
      expect(res.text).not.toContain(sha256Hex(secret));
    }
  });

  it('reads one key, and answers 404 key_not_found for an unknown id', async () => {
    const { s } = await setup();
    const created = await createKey(s, { name: 'one', plan: 'standard' });
    const res = await admin(s, `keys/${created.json.id}`);
    expect(res.json).toMatchObject({ id: created.json.id, name: 'one', plan: 'standard' });
    const missing = await admin(s, 'keys/key_0000000000000000');
    expect(missing.status).toBe(404);
    expect(missing.json.error).toEqual({
      code: 'key_not_found',
      message: expect.any(String),
      requestId: missing.headers.get('x-request-id'),
    });
  });
});

describe('PATCH /admin/v1/keys/{id}', () => {
  it('changes name, plan and active; the next chat request follows the change', async () => {
    const { s } = await setup();
    const created = await createKey(s, { name: 'old name', plan: 'standard' });
    const { id, key } = created.json;
    await chat(s, key, { message: 'Hallo' });

    const renamed = await admin(s, `keys/${id}`, {
      method: 'PATCH',
      body: { name: 'new name', plan: 'plus' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toMatchObject({
      name: 'new name',
      plan: 'plus',
      usage: { used: 1, limit: 5000, remaining: 4999 },
    });
    const reply = await chat(s, key, { message: 'Hallo' });
    expect(reply.headers.get('x-ratelimit-limit')).toBe('5000');

    const off = await admin(s, `keys/${id}`, { method: 'PATCH', body: { active: false } });
    expect(off.json).toMatchObject({ active: false, status: 'inactive' });
    expect((await chat(s, key, { message: 'Hallo' })).json.error.code).toBe('plan_inactive');

    const on = await admin(s, `keys/${id}`, { method: 'PATCH', body: { active: true } });
    expect(on.json).toMatchObject({ active: true, status: 'active' });
    expect((await chat(s, key, { message: 'Hallo' })).json).toEqual({ reply: expect.any(String) });
  });

  it('answers 409 key_revoked for a revoked key and 404 for an unknown one', async () => {
    const { s } = await setup();
    const { id } = (await createKey(s, { name: 'gone', plan: 'standard' })).json;
    await admin(s, `keys/${id}/revoke`, { method: 'POST' });
    const res = await admin(s, `keys/${id}`, { method: 'PATCH', body: { active: true } });
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('key_revoked');
    const missing = await admin(s, 'keys/key_zzzzzzzzzzzzzzzz', {
      method: 'PATCH',
      body: { active: true },
    });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('key_not_found');
  });
});

describe('POST /admin/v1/keys/{id}/rotate', () => {
  it('without grace: the new key works, the old one is refused at once, usage carries over', async () => {
    const { s } = await setup();
    const created = await createKey(s, { name: 'rotating', plan: 'standard' });
    const { id, key: oldKey } = created.json;
    await chat(s, oldKey, { message: 'Hallo' });

    const res = await admin(s, `keys/${id}/rotate`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      id,
      name: 'rotating',
      key: expect.stringMatching(/^plauder_/),
      previousKeyExpiresAt: new Date(NOV_2026).toISOString(),
      usage: { used: 1 },
    });
    const newKey: string = res.json.key;
    for (const k of [oldKey, newKey]) expect(res.text).not.toContain(sha256Hex(k));
    expect(newKey).not.toBe(oldKey);
    expect(res.json.displayPrefix).toBe(newKey.slice(0, 12));

    const refused = await chat(s, oldKey, { message: 'Hallo' });
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe('invalid_api_key');
    const accepted = await chat(s, newKey, { message: 'Hallo' });
    expect(accepted.status).toBe(200);
    expect(accepted.headers.get('x-ratelimit-remaining')).toBe('998');
    expect((await admin(s, `keys/${id}`)).text).not.toContain(newKey);
  });

  it('with grace "2h": the old key works until the grace ends', async () => {
    const { s, clock } = await setup();
    const { id, key: oldKey } = (await createKey(s, { name: 'grace', plan: 'standard' })).json;
    const res = await admin(s, `keys/${id}/rotate`, { body: { grace: '2h' } });
    expect(res.status).toBe(200);
    expect(res.json.previousKeyExpiresAt).toBe(new Date(NOV_2026 + 2 * 3_600_000).toISOString());
    expect((await chat(s, oldKey, { message: 'Hallo' })).status).toBe(200);
    clock.now += 2 * 3_600_000;
    expect((await chat(s, oldKey, { message: 'Hallo' })).status).toBe(401);
    expect((await chat(s, res.json.key, { message: 'Hallo' })).status).toBe(200);
  });

  it('accepts the longest grace, a year', async () => {
    const { s } = await setup();
    const { id } = (await createKey(s, { name: 'slow', plan: 'standard' })).json;
    const res = await admin(s, `keys/${id}/rotate`, { body: { grace: '365d' } });
    expect(res.status).toBe(200);
    expect(res.json.previousKeyExpiresAt).toBe(new Date(NOV_2026 + 365 * 86_400_000).toISOString());
  });

  it('answers 409 key_revoked for a revoked key', async () => {
    const { s } = await setup();
    const { id } = (await createKey(s, { name: 'gone', plan: 'standard' })).json;
    await admin(s, `keys/${id}/revoke`, { method: 'POST' });
    const res = await admin(s, `keys/${id}/rotate`, { method: 'POST' });
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('key_revoked');
  });
});

describe('POST /admin/v1/keys/{id}/revoke', () => {
  it('refuses every secret of the key from the next request on, also one in its grace', async () => {
    const { s } = await setup();
    const { id, key: first } = (await createKey(s, { name: 'leaked', plan: 'standard' })).json;
    const second = (await admin(s, `keys/${id}/rotate`, { body: { grace: '1d' } })).json.key;

    const res = await admin(s, `keys/${id}/revoke`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({
      id,
      status: 'revoked',
      active: false,
      revokedAt: new Date(NOV_2026).toISOString(),
    });
    expect(res.json).not.toHaveProperty('key');
    for (const key of [first, second]) {
      expect((await chat(s, key, { message: 'Hallo' })).status).toBe(401);
    }
    const again = await admin(s, `keys/${id}/revoke`, { method: 'POST' });
    expect(again.status).toBe(409);
    expect(again.json.error.code).toBe('key_revoked');
  });
});

describe('GET /admin/v1/usage', () => {
  it('counts exactly the answered chat requests per key and in total, for any month', async () => {
    const { s, clock } = await setup(Date.UTC(2026, 9, 31, 23, 59));
    const a = (await createKey(s, { name: 'a', plan: 'standard' })).json;
    const b = (await createKey(s, { name: 'b', plan: 'plus' })).json;
    const c = (await createKey(s, { name: 'idle', plan: 'standard' })).json;
    await chat(s, a.key, { message: 'Oktober' });
    clock.now = NOV_2026;
    for (let i = 0; i < 4; i++) await chat(s, a.key, { message: 'Hallo' });
    for (let i = 0; i < 2; i++) await chat(s, b.key, { message: 'Hi' }, '/api/chat-en');
    await chat(s, b.key, { message: 42 }); // soft error: not counted
    await chat(s, misspelled(b.key), { message: 'Hi' }); // 401: not counted

    const november = await admin(s, 'usage');
    expect(november.status).toBe(200);
    expect({ ...november.json, keys: byName(november.json.keys) }).toEqual({
      month: '2026-11',
      timeZone: 'UTC',
      total: 6,
      // The default plans have no token budgets.
      totalTokens: 0,
      keys: [
        {
          id: a.id,
          name: 'a',
          plan: 'standard',
          status: 'active',
          used: 4,
          limit: 1000,
          tokens: null,
        },
        { id: b.id, name: 'b', plan: 'plus', status: 'active', used: 2, limit: 5000, tokens: null },
        {
          id: c.id,
          name: 'idle',
          plan: 'standard',
          status: 'active',
          used: 0,
          limit: 1000,
          tokens: null,
        },
      ],
      page: { limit: 50, total: 3, nextCursor: null },
    });
    expect((await admin(s, 'usage?month=2026-11')).json).toEqual(november.json);

    const october = await admin(s, 'usage?month=2026-10');
    expect(october.json.total).toBe(1);
    expect(byName<{ name: string }>(october.json.keys)[0]).toMatchObject({ id: a.id, used: 1 });
    expect((await admin(s, 'usage?month=2020-01')).json.total).toBe(0);

    // The key holder sees the same count.
    expect((await http(`${s.url}/api/usage`, { key: a.key })).json.used).toBe(4);
  });
});

describe('GET /admin/v1/keys/{id}/usage', () => {
  it('gives the last 12 months, oldest first, and the days of this month, with zero where there were no requests', async () => {
    const { s, clock } = await setup(Date.UTC(2026, 0, 15));
    const { id, key } = (await createKey(s, { name: 'chart', plan: 'standard' })).json;
    await chat(s, key, { message: 'Januar' });
    clock.now = Date.UTC(2026, 2, 3);
    for (let i = 0; i < 3; i++) await chat(s, key, { message: 'März' });

    const res = await admin(s, `keys/${id}/usage`);
    expect(res.status).toBe(200);
    expect(res.json.id).toBe(id);
    expect(res.json.limit).toBe(1000);
    expect(res.json.months).toHaveLength(12);
    expect(res.json.months[0]).toEqual({ month: '2025-04', used: 0, tokens: 0 });
    expect(res.json.tokenLimit).toBeNull();
    expect(res.json.months.slice(-3)).toEqual([
      { month: '2026-01', used: 1, tokens: 0 },
      { month: '2026-02', used: 0, tokens: 0 },
      { month: '2026-03', used: 3, tokens: 0 },
    ]);
    // Each day of the current month up to today, zero for days without requests.
    expect(res.json.currentMonth).toEqual({ day: 3, days: 31 });
    expect(res.json.days).toEqual([
      { date: '2026-03-01', used: 0 },
      { date: '2026-03-02', used: 0 },
      { date: '2026-03-03', used: 3 },
    ]);
    clock.now = Date.UTC(2026, 1, 28, 12);
    const february = (await admin(s, `keys/${id}/usage`)).json;
    expect(february.currentMonth).toEqual({ day: 28, days: 28 });
    expect(february.days).toHaveLength(28);
    expect(february.days.every((d: { used: number }) => d.used === 0)).toBe(true);
    expect((await admin(s, 'keys/key_0000000000000000/usage')).status).toBe(404);
  });
});

describe('GET /admin/v1/plans', () => {
  it('lists the configured plans in their configured order', async () => {
    server = await startAdminServer({
      env: { PLAUDER_PLANS: 'standard=1000,plus=5000,team=20000+2000000tokens/month' },
    });
    const res = await admin(server, 'plans');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      plans: [
        { name: 'standard', limit: 1000, perMinute: null, tokens: null },
        { name: 'plus', limit: 5000, perMinute: null, tokens: null },
        {
          name: 'team',
          limit: 20000,
          perMinute: null,
          // A budget without `Ntokens/answer` caps answers at 4096 tokens.
          tokens: { perMonth: 2000000, perMinute: null, perAnswer: 4096 },
        },
      ],
    });
    const created = await admin(server, 'keys', { body: { name: 'big', plan: 'team' } });
    expect(created.json.usage.limit).toBe(20000);
  });
});
