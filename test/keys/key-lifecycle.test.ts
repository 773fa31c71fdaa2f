import { afterEach, describe, expect, it } from 'vitest';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer | undefined;
afterEach(() => server?.close());

async function setup() {
  const clock = { now: Date.UTC(2026, 10, 10, 12) };
  server = await startTestServer({ clock: () => clock.now, env: { PLAUDER_CORE: 'placeholder' } });
  const issued = await server.createKey({ plan: 'standard' });
  return { s: server, clock, ...issued };
}

const ask = (s: TestServer, key: string, sessionId?: string) =>
  chat({ url: s.url }, key, { message: 'Hallo', ...(sessionId ? { sessionId } : {}) });

describe('key lifecycle', () => {
  it('rotation without grace: the old key is refused at once; id, usage and sessions carry over', async () => {
    const { s, id, key } = await setup();
    await ask(s, key, 'memo');
    await ask(s, key, 'memo');

    const rotated = await s.services.keys.rotate(id);
    if (!rotated.ok) throw new Error('rotate failed');
    expect(rotated.value.id).toBe(id);
    expect(rotated.value.key).not.toBe(key);

    expect((await ask(s, key)).status).toBe(401);
    const res = await ask(s, rotated.value.key, 'memo');
    expect(res.status).toBe(200);
    expect(res.json.reply).toContain('3'); // the placeholder core numbers turns: the session carried over
    expect(res.headers.get('x-ratelimit-remaining')).toBe('997');
    const session = await http(`${s.url}/api/sessions/memo`, { key: rotated.value.key });
    expect(session.json.turns).toHaveLength(3);
  });

  it('rotation with a grace period: both keys work until it ends, then only the new one', async () => {
    const { s, clock, id, key } = await setup();
    const rotated = await s.services.keys.rotate(id, 60 * 60_000);
    if (!rotated.ok) throw new Error('rotate failed');

    expect((await ask(s, key)).status).toBe(200);
    expect((await ask(s, rotated.value.key)).status).toBe(200);
    clock.now += 60 * 60_000 - 1;
    expect((await ask(s, key)).status).toBe(200);
    clock.now += 1;
    expect((await ask(s, key)).status).toBe(401);
    expect((await ask(s, rotated.value.key)).status).toBe(200);
    const usage = await http(`${s.url}/api/usage`, { key: rotated.value.key });
    expect(usage.json.used).toBe(4);
  });

  it('a second rotation does not extend the grace of the first secret', async () => {
    const { s, clock, id, key } = await setup();
    await s.services.keys.rotate(id, 10 * 60_000);
    const second = await s.services.keys.rotate(id, 60 * 60_000);
    if (!second.ok) throw new Error('rotate failed');
    clock.now += 10 * 60_000;
    expect((await ask(s, key)).status).toBe(401);
  });

  it('revocation refuses every secret of the key at once, also one in its grace period', async () => {
    const { s, id, key } = await setup();
    const rotated = await s.services.keys.rotate(id, 60 * 60_000);
    if (!rotated.ok) throw new Error('rotate failed');
    expect((await s.services.keys.revoke(id)).ok).toBe(true);
    for (const k of [key, rotated.value.key]) {
      const res = await ask(s, k);
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe('invalid_api_key');
      expect((await http(`${s.url}/api/usage`, { key: k })).status).toBe(401);
    }
    expect((await s.services.keys.rotate(id)).ok).toBe(false);
    expect((await s.services.keys.update(id, { active: true })).ok).toBe(false);
  });

  it('deactivation gives plan_inactive without counting; activation restores replies', async () => {
    const { s, id, key } = await setup();
    await s.services.keys.update(id, { active: false });
    const inactive = await ask(s, key);
    expect(inactive.json.error.code).toBe('plan_inactive');
    expect((await http(`${s.url}/api/usage`, { key })).json).toMatchObject({
      active: false,
      used: 0,
    });
    await s.services.keys.update(id, { active: true });
    expect((await ask(s, key)).json).toEqual({ reply: expect.any(String) });
  });

  it('a plan change applies to the next request: limit and remaining follow the new plan', async () => {
    const { s, id, key } = await setup();
    await ask(s, key);
    expect((await s.services.keys.update(id, { plan: 'plus' })).ok).toBe(true);
    const res = await ask(s, key);
    expect(res.headers.get('x-ratelimit-limit')).toBe('5000');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('4998');
    expect((await s.services.keys.update(id, { plan: 'gold' })).ok).toBe(false);
  });

  it('stores only the SHA-256 hash and a display prefix of a key', async () => {
    const { s, key } = await setup();
    const { createHash } = await import('node:crypto');
    const rows = await s.services.store.db.selectFrom('key_secrets').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.hash).toBe(createHash('sha256').update(key).digest('hex'));
    expect(rows[0]?.display_prefix).toBe(key.slice(0, 12));
    expect(JSON.stringify(rows)).not.toContain(key.slice(12));
  });
});

describe('key checks before the database', () => {
  it('refuses a mistyped key with 401 even when the database is gone, which needs no lookup', async () => {
    const { s, key } = await setup();
    await s.services.store.close();
    const typo = `${key.slice(0, 20)}${key[20] === 'a' ? 'b' : 'a'}${key.slice(21)}`;
    const refused = await ask(s, typo);
    expect(refused.status).toBe(401);
    expect(refused.json.error.code).toBe('invalid_api_key');
    // A well-formed key does need the database: with it gone, that is a technical error.
    const needsLookup = await ask(s, key);
    expect(needsLookup.status).toBe(500);
    expect(needsLookup.json.error.code).toBe('internal_error');
  });
});
