import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createTurnSealer } from '../../src/sessions/turn-sealer.js';
import { loadSecret } from '../../src/storage/secret.js';
import { recordingCore } from '../helpers/recording-core.js';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer | undefined;
afterEach(() => server?.close());

/** Records what the core was given, and answers with a numbered reply. */
const numbered = () =>
  recordingCore(
    (request) =>
      `${request.language === 'de' ? 'Antwort' : 'Answer'} ${request.history.length + 1}`,
  );

async function setup(env: Record<string, string> = {}, clock?: { now: number }) {
  const { core, seen } = numbered();
  server = await startTestServer({ core, env, ...(clock ? { clock: () => clock.now } : {}) });
  return { s: server, seen };
}

const H = (s: TestServer) => ({ url: s.url });

async function keyIdOf(s: TestServer, key: string): Promise<string> {
  const auth = await s.services.keys.authenticate(`Bearer ${key}`);
  if (!auth) throw new Error('key not found');
  return auth.id;
}

/** Opens the stored window with the server's own secret: what is really on disk. */
async function storedWindow(s: TestServer, key: string, sessionId: string): Promise<unknown[]> {
  const keyId = await keyIdOf(s, key);
  const sealer = createTurnSealer(loadSecret(s.config.secret));
  const hash = sealer.sessionHash(keyId, sessionId);
  const row = await s.services.store.db
    .selectFrom('sessions')
    .select(['turn_count', 'sealed_window'])
    .where('key_id', '=', keyId)
    .where('session_hash', '=', hash)
    .executeTakeFirstOrThrow();
  const binding = `${keyId}\0${hash}\0window\0${row.turn_count}`;
  return sealer.openJson(row.sealed_window ?? '', binding) as unknown[];
}

describe('sessions', () => {
  it('hands the core the earlier turns of the session, oldest first, across both endpoints', async () => {
    const { s, seen } = await setup();
    const { key } = await s.createKey();
    await chat(H(s), key, { message: 'Ich heiße Anna', sessionId: 'conv-1' });
    await chat(H(s), key, { message: 'What is my name?', sessionId: 'conv-1' }, '/api/chat-en');
    await chat(H(s), key, { message: 'Und jetzt?', sessionId: 'conv-1' });

    expect(seen[2]?.history).toEqual([
      { message: 'Ich heiße Anna', reply: 'Antwort 1', language: 'de' },
      { message: 'What is my name?', reply: 'Answer 2', language: 'en' },
    ]);
    expect(seen[2]?.language).toBe('de');
  });

  it('gives no memory without a sessionId and stores nothing', async () => {
    const { s, seen } = await setup();
    const { key } = await s.createKey();
    await chat(H(s), key, { message: 'Ich heiße Anna' });
    await chat(H(s), key, { message: 'Wie heiße ich?' });
    expect(seen.map((r) => r.history.length)).toEqual([0, 0]);
    const rows = await sql<{ n: number }>`select count(*) as n from sessions`.execute(
      s.services.store.db,
    );
    expect(Number(rows.rows[0]?.n)).toBe(0);
  });

  it('keeps two keys with the same sessionId apart: neither sees the other’s turns', async () => {
    const { s, seen } = await setup();
    const alice = await s.createKey({ name: 'alice' });
    const bob = await s.createKey({ name: 'bob' });
    await chat(H(s), alice.key, { message: 'Alice secret', sessionId: 'shared' });
    await chat(H(s), bob.key, { message: 'Bob hier', sessionId: 'shared' });

    expect(seen[1]?.history).toEqual([]);
    const bobView = await http(`${s.url}/api/sessions/shared`, { key: bob.key });
    expect(bobView.status).toBe(200);
    expect(bobView.json.turns.map((t: { message: string }) => t.message)).toEqual(['Bob hier']);
    expect(bobView.text).not.toContain('Alice secret');

    // Bob deleting "shared" deletes only his conversation.
    expect(
      (await http(`${s.url}/api/sessions/shared`, { method: 'DELETE', key: bob.key })).status,
    ).toBe(204);
    const aliceView = await http(`${s.url}/api/sessions/shared`, { key: alice.key });
    expect(aliceView.json.turns.map((t: { message: string }) => t.message)).toEqual([
      'Alice secret',
    ]);
  });

  it('GET returns the stored turns; DELETE erases them for good (204, then 404)', async () => {
    const { s, seen } = await setup();
    const { key } = await s.createKey();
    await chat(H(s), key, { message: 'eins', sessionId: 'a.b:c@d-e_f' });
    await chat(H(s), key, { message: 'two', sessionId: 'a.b:c@d-e_f' }, '/api/chat-en');

    const read = await http(`${s.url}/api/sessions/a.b:c@d-e_f`, { key });
    expect(read.status).toBe(200);
    expect(read.headers.get('cache-control')).toBe('no-store');
    expect(read.json).toEqual({
      sessionId: 'a.b:c@d-e_f',
      turns: [
        {
          message: 'eins',
          reply: 'Antwort 1',
          language: 'de',
          createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
        { message: 'two', reply: 'Answer 2', language: 'en', createdAt: expect.any(String) },
      ],
    });

    expect(
      (await http(`${s.url}/api/sessions/a.b:c@d-e_f`, { method: 'DELETE', key })).status,
    ).toBe(204);
    expect((await http(`${s.url}/api/sessions/a.b:c@d-e_f`, { key })).json.error.code).toBe(
      'session_not_found',
    );
    expect(
      (await http(`${s.url}/api/sessions/a.b:c@d-e_f`, { method: 'DELETE', key })).status,
    ).toBe(404);
    await chat(H(s), key, { message: 'neu', sessionId: 'a.b:c@d-e_f' });
    expect(seen.at(-1)?.history).toEqual([]);
  });

  it('answers 401 without a valid key and 404 for unknown or malformed ids, and never counts', async () => {
    const { s } = await setup();
    const { key, id } = await s.createKey();
    expect((await http(`${s.url}/api/sessions/x`)).status).toBe(401);
    expect(
      (await http(`${s.url}/api/sessions/x`, { method: 'DELETE' })).headers.get('www-authenticate'),
    ).toBe('Bearer realm="plauder"');
    expect((await http(`${s.url}/api/sessions/nope`, { key })).status).toBe(404);
    expect((await http(`${s.url}/api/sessions/${'x'.repeat(200)}`, { key })).status).toBe(404);
    expect((await http(`${s.url}/api/sessions/a%20b`, { key, method: 'DELETE' })).status).toBe(404);
    expect(await s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month)).toBe(0);
  });

  it('hands the core only the last PLAUDER_SESSION_WINDOW turns and keeps no more', async () => {
    const { s, seen } = await setup({ PLAUDER_SESSION_WINDOW: '3' });
    const { key } = await s.createKey();
    for (let i = 1; i <= 6; i++) await chat(H(s), key, { message: `m${i}`, sessionId: 'w' });
    expect(seen[5]?.history.map((t) => t.message)).toEqual(['m3', 'm4', 'm5']);
    const read = await http(`${s.url}/api/sessions/w`, { key });
    expect(read.json.turns.map((t: { message: string }) => t.message)).toEqual(['m4', 'm5', 'm6']);
    // The stored window itself holds three turns, not six.
    const stored = await storedWindow(s, key, 'w');
    expect(stored).toHaveLength(3);
  });

  it('forgets a session idle longer than PLAUDER_SESSION_TTL, and the sweep deletes it', async () => {
    const clock = { now: Date.UTC(2026, 10, 2) };
    const { s, seen } = await setup({ PLAUDER_SESSION_TTL: '1h' }, clock);
    const { key } = await s.createKey();
    await chat(H(s), key, { message: 'alt', sessionId: 'idle' });
    await chat(H(s), key, { message: 'bleibt', sessionId: 'busy' });

    clock.now += 59 * 60_000;
    await chat(H(s), key, { message: 'noch da', sessionId: 'busy' });
    expect(seen.at(-1)?.history.map((t) => t.message)).toEqual(['bleibt']);

    clock.now += 2 * 60_000; // "idle" is now 61 minutes idle, "busy" 2 minutes.
    expect((await http(`${s.url}/api/sessions/idle`, { key })).status).toBe(404);
    expect(await s.services.sessions.sweep(clock.now)).toBe(1);
    const left = await sql<{ n: number }>`select count(*) as n from sessions`.execute(
      s.services.store.db,
    );
    expect(left.rows[0]?.n).toBe(1);
    expect((await http(`${s.url}/api/sessions/busy`, { key })).json.turns).toHaveLength(2);

    await chat(H(s), key, { message: 'neu', sessionId: 'idle' });
    expect(seen.at(-1)?.history).toEqual([]);
  });

  it('starts an expired session afresh even before the sweep ran', async () => {
    const clock = { now: Date.UTC(2026, 10, 2) };
    const { s, seen } = await setup({ PLAUDER_SESSION_TTL: '1h' }, clock);
    const { key } = await s.createKey();
    await chat(H(s), key, { message: 'vorher', sessionId: 'x' });
    clock.now += 2 * 3_600_000;
    await chat(H(s), key, { message: 'nachher', sessionId: 'x' });
    expect(seen.at(-1)?.history).toEqual([]);
    expect(
      (await http(`${s.url}/api/sessions/x`, { key })).json.turns.map(
        (t: { message: string }) => t.message,
      ),
    ).toEqual(['nachher']);
  });

  it('keeps every turn of concurrent requests on one session: none overwrites another', async () => {
    const { s, seen } = await setup();
    const { key } = await s.createKey();
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        chat(H(s), key, { message: `p${i}`, sessionId: 'busy' }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(12).fill(200));
    const read = await http(`${s.url}/api/sessions/busy`, { key });
    const messages = read.json.turns.map((t: { message: string }) => t.message);
    expect([...messages].sort()).toEqual(Array.from({ length: 12 }, (_, i) => `p${i}`).sort());
    expect(seen).toHaveLength(12);
  });

  it('keeps the sealed window as bytes on SQLite, as base64url text on PostgreSQL, and reads a window stored as text on either', async () => {
    const { s: writer } = await setup();
    const { key } = await writer.createKey();
    await chat(H(writer), key, { message: 'eins', sessionId: 'b' });
    const db = writer.services.store.db;
    const stored = async () =>
      (await db.selectFrom('sessions').select('sealed_window').executeTakeFirstOrThrow())
        .sealed_window;
    const sealed = await stored();
    if (writer.database.dialect === 'sqlite') {
      const type = await sql<{
        type: string;
      }>`select typeof(sealed_window) as type from sessions`.execute(db);
      expect(type.rows[0]?.type).toBe('blob');
      // 12 bytes of IV, the window's JSON and 16 of tag: no encoding around them.
      const window = await storedWindow(writer, key, 'b');
      expect((sealed as Buffer).length).toBe(12 + Buffer.byteLength(JSON.stringify(window)) + 16);
      // As releases before stored it: the same bytes as base64url text.
      await db
        .updateTable('sessions')
        .set({ sealed_window: (sealed as Buffer).toString('base64url') })
        .execute();
    } else {
      expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);
    }
    expect(await storedWindow(writer, key, 'b')).toHaveLength(1);
    expect(await storedWindow(writer, key, 'b')).toEqual([
      ['eins', 'Antwort 1', 'de', expect.any(Number)],
    ]);

    // Another instance, which reads the window from the database (the writer keeps its own
    // in memory).
    const { core, seen } = numbered();
    const s = await startTestServer({ core, database: writer.database });
    try {
      await chat(H(s), key, { message: 'zwei', sessionId: 'b' });
      expect(seen[0]?.history).toEqual([{ message: 'eins', reply: 'Antwort 1', language: 'de' }]);
      const after = await stored();
      expect(typeof after === 'string').toBe(writer.database.dialect === 'postgres');
      expect(await storedWindow(s, key, 'b')).toHaveLength(2);
    } finally {
      await s.close();
    }
  });

  it('treats a window that does not open (tampered, or another secret) as no memory', async () => {
    const { s: writer } = await setup();
    const { key } = await writer.createKey();
    await chat(H(writer), key, { message: 'eins', sessionId: 't' });
    await writer.services.store.db
      .updateTable('sessions')
      .set({ sealed_window: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' })
      .execute();
    // Another instance, which has not seen the window before it was tampered with (the
    // writer keeps the window it wrote in memory, as it was).
    const { core, seen } = numbered();
    const s = await startTestServer({ core, database: writer.database });
    try {
      expect((await http(`${s.url}/api/sessions/t`, { key })).status).toBe(404);
      await chat(H(s), key, { message: 'zwei', sessionId: 't' });
      expect(seen[0]?.history).toEqual([]);
      const read = await http(`${s.url}/api/sessions/t`, { key });
      expect(read.json.turns.map((t: { message: string }) => t.message)).toEqual(['zwei']);
    } finally {
      await s.close();
    }
  });
});
