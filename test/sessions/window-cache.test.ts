/**
 * Each instance keeps the windows of its recent sessions in memory (session-service.ts).
 * Two instances on one database (SQLite or PostgreSQL, as the project runs): what one
 * writes or deletes, the other's core sees at its next turn, never a copy from before.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { CoreRequest } from '../../src/core/core-adapter.js';
import { createSessionService } from '../../src/sessions/session-service.js';
import { createTurnSealer, type TurnSealer } from '../../src/sessions/turn-sealer.js';
import { createStore } from '../../src/storage/create-database.js';
import { createKeysRepository } from '../../src/storage/repositories/keys-repository.js';
import {
  createSessionsRepository,
  type SessionsRepository,
} from '../../src/storage/repositories/sessions-repository.js';
import { UnitOfWork } from '../../src/storage/unit-of-work.js';
import { recordingCore } from '../helpers/recording-core.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

async function twoInstances(): Promise<{
  a: TestServer;
  b: TestServer;
  seenByA: CoreRequest[];
  key: string;
}> {
  const database: TestDatabase = await createTestDatabase();
  cleanup.push(() => database.drop());
  const recording = recordingCore();
  const a = await startTestServer({ database, core: recording.core });
  cleanup.push(() => a.close());
  const b = await startTestServer({ database, core: recordingCore().core });
  cleanup.push(() => b.close());
  const { key } = await a.createKey();
  return { a, b, seenByA: recording.seen, key };
}

const say = (s: TestServer, key: string, message: string) =>
  chat({ url: s.url }, key, { message, sessionId: 'shared' });
const messagesOf = (request: CoreRequest | undefined) =>
  request?.history.map((turn) => turn.message);

describe('the in-memory windows of two instances of one database', () => {
  it('show each instance the turns the other stored since', async () => {
    const { a, b, seenByA, key } = await twoInstances();
    expect((await say(a, key, 'eins')).status).toBe(200);
    expect((await say(a, key, 'zwei')).status).toBe(200);
    expect((await say(b, key, 'drei')).status).toBe(200);
    expect((await say(a, key, 'vier')).status).toBe(200);
    expect(messagesOf(seenByA.at(-1))).toEqual(['eins', 'zwei', 'drei']);
    const stored = await http(`${a.url}/api/sessions/shared`, { key });
    expect(stored.json.turns.map((t: { message: string }) => t.message)).toEqual([
      'eins',
      'zwei',
      'drei',
      'vier',
    ]);
  });

  it('forget a session the other instance deleted, also when it is begun again to the same length', async () => {
    const { a, b, seenByA, key } = await twoInstances();
    await say(a, key, 'alt-1');
    await say(a, key, 'alt-2');
    expect((await http(`${b.url}/api/sessions/shared`, { key, method: 'DELETE' })).status).toBe(
      204,
    );
    // Begun again on b with as many turns as a has in memory: same count, new beginning.
    await say(b, key, 'neu-1');
    await say(b, key, 'neu-2');
    await say(a, key, 'neu-3');
    expect(messagesOf(seenByA.at(-1))).toEqual(['neu-1', 'neu-2']);
  });

  it('forget a session deleted on the instance itself at once', async () => {
    const { a, seenByA, key } = await twoInstances();
    await say(a, key, 'vorher');
    expect((await http(`${a.url}/api/sessions/shared`, { key, method: 'DELETE' })).status).toBe(
      204,
    );
    expect((await http(`${a.url}/api/sessions/shared`, { key })).status).toBe(404);
    await say(a, key, 'nachher');
    expect(messagesOf(seenByA.at(-1))).toEqual([]);
  });
});

describe('a turn that opened a session before it was deleted', () => {
  it('is stored after the new conversation, and brings back none of the deleted turns', async () => {
    const { repository } = await storeWithKey();
    const sealer = createTurnSealer(randomBytes(32));
    const options = { window: 20, ttlMs: 60_000 };
    const sessions = createSessionService(repository, sealer, options);
    const turn = (message: string) => ({
      message,
      reply: `re ${message}`,
      language: 'de' as const,
    });
    await (await sessions.open('key_1', 's', 1000)).record(turn('deleted'), 1000);
    // A slow turn opens the session now (its core sees the turn about to be deleted)…
    const slow = await sessions.open('key_1', 's', 2000);
    expect(slow.history.map((t) => t.message)).toEqual(['deleted']);
    // …the holder deletes it, and a new conversation under the same id reaches the same count…
    expect(await sessions.delete('key_1', 's', 3000)).toBe(true);
    await (await sessions.open('key_1', 's', 4000)).record(turn('new'), 4000);
    // …before the slow turn's reply is stored.
    await slow.record(turn('slow'), 5000);

    expect((await sessions.read('key_1', 's', 6000))?.map((t) => t.message)).toEqual([
      'new',
      'slow',
    ]);
    // What is on disk, read by an instance without this one's memory of the session.
    const other = createSessionService(repository, sealer, options);
    expect((await other.read('key_1', 's', 6000))?.map((t) => t.message)).toEqual(['new', 'slow']);
  });
});

/** A store with one key, its sessions repository, and one that counts the windows it reads. */
async function storeWithKey() {
  const database = await createTestDatabase();
  cleanup.push(() => database.drop());
  const store = await createStore(loadConfig(database.env).database);
  cleanup.push(() => store.close());
  await createKeysRepository(store.db).create(
    { id: 'key_1', name: 'k', plan: 'standard', active: true, hash: 'h', displayPrefix: 'p' },
    0,
  );
  const repository = createSessionsRepository(store.db, store.features);
  const reads = { windows: 0 };
  const counting: SessionsRepository = {
    ...repository,
    find: (keyId, hash) => {
      reads.windows++;
      return repository.find(keyId, hash);
    },
  };
  return { repository, counting, reads };
}

const turnOf = (text: string) => ({
  message: text,
  reply: `re ${text}`,
  language: 'de' as const,
});

/** A session service over `repository` that counts its locked writes, opened windows and seals. */
function countingSessions(repository: SessionsRepository, cachedWindowChars?: number) {
  const sealer = createTurnSealer(randomBytes(32));
  const calls = { locked: 0, opened: 0, sealed: 0 };
  const counting: SessionsRepository = {
    ...repository,
    appendTurn: (...args) => {
      calls.locked++;
      return repository.appendTurn(...args);
    },
  };
  const countingSealer: TurnSealer = {
    ...sealer,
    openJson: (...args) => {
      calls.opened++;
      return sealer.openJson(...args);
    },
    openJsonBytes: (...args) => {
      calls.opened++;
      return sealer.openJsonBytes(...args);
    },
    sealJsonBytes: (...args) => {
      calls.sealed++;
      return sealer.sealJsonBytes(...args);
    },
  };
  const options = { window: 20, ttlMs: 60_000, cachedWindowChars };
  return {
    sessions: createSessionService(counting, countingSealer, options),
    calls,
    sealer,
    options,
  };
}

describe('the in-memory windows of one instance', () => {
  it('hold at most their budget of text, the least recently used going first', async () => {
    const { counting, reads } = await storeWithKey();
    // Room for two sessions of one 10-character turn each, not three.
    const sessions = createSessionService(counting, createTurnSealer(randomBytes(32)), {
      window: 20,
      ttlMs: 60_000,
      cachedWindowChars: 25,
    });
    const turn = { message: 'hallo', reply: 'hallo', language: 'de' as const };
    for (const id of ['a', 'b', 'c']) {
      const opened = await sessions.open('key_1', id, 1000);
      await opened.record(turn, 1000);
    }
    reads.windows = 0;
    await sessions.open('key_1', 'c', 2000);
    await sessions.open('key_1', 'b', 2000);
    expect(reads.windows).toBe(0);
    const a = await sessions.open('key_1', 'a', 2000); // pushed out by c
    expect(reads.windows).toBe(1);
    expect(a.history).toEqual([turn]);
  });

  it('store the same window whether a turn found it in the cache or read it from the database', async () => {
    const { repository, counting, reads } = await storeWithKey();
    const sealer = createTurnSealer(randomBytes(32));
    const options = { window: 3, ttlMs: 60_000 };
    // `warm` keeps windows in memory; `cold` (no cache) reads every window and seals it whole.
    const warm = createSessionService(counting, sealer, options);
    const cold = createSessionService(repository, sealer, { ...options, cachedWindowChars: 0 });
    const turnOf = (text: string) => ({
      message: text,
      reply: `re ${text}`,
      language: 'de' as const,
    });
    const say = async (service: typeof warm, text: string, at: number) =>
      (await service.open('key_1', 'a', at)).record(turnOf(text), at);

    await say(cold, 'a1', 1000);
    await say(cold, 'a2', 1001);
    reads.windows = 0;
    await say(warm, 'a3', 1002); // read from the database, sealed whole
    await say(warm, 'a4', 1003); // found in the cache: encoded whole, its bytes kept
    await say(warm, 'a5', 1004); // found in the cache with its bytes: cut and appended
    expect(reads.windows).toBe(1);
    await say(cold, 'a6', 1005); // reads the window sealed from the kept bytes
    await say(warm, 'a7', 1006); // its copy is stale: read again
    expect(reads.windows).toBe(2);

    // A third instance opens what was stored: the last 3 turns, in order.
    const other = createSessionService(repository, sealer, options);
    const opened = await other.open('key_1', 'a', 2000);
    expect(opened.history).toEqual([turnOf('a5'), turnOf('a6'), turnOf('a7')]);
  });

  it('write a window kept in memory from its bytes turn after turn, past its bound, exactly', async () => {
    const { repository, counting, reads } = await storeWithKey();
    const sealer = createTurnSealer(randomBytes(32));
    const options = { window: 4, ttlMs: 60_000 };
    const warm = createSessionService(counting, sealer, options);
    const turnOf = (i: number) => ({
      message: `"${i}", [${i}], {${i}} \\ 👋 ß ${'x'.repeat(i * 7)}`,
      reply: `re ${i}],["`,
      language: i % 3 === 0 ? ('en' as const) : ('de' as const),
    });
    const turns = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, k) => turnOf(from + k));
    for (let i = 1; i <= 11; i++) {
      const opened = await warm.open('key_1', 'w', 1000 + i);
      expect(opened.history).toEqual(turns(Math.max(1, i - 4), i - 1));
      await opened.record(turnOf(i), 1000 + i);
      // What was stored, read by an instance without a cache: the last 4 turns, in order.
      const cold = createSessionService(repository, sealer, { ...options, cachedWindowChars: 0 });
      expect((await cold.open('key_1', 'w', 5000)).history).toEqual(turns(Math.max(1, i - 3), i));
    }
    // Only the first turn read its window (there was none yet); all others found it kept.
    expect(reads.windows).toBe(1);
  });

  it('store a turn after the turns stored since it opened its session, with one seal and nothing opened again', async () => {
    const { repository } = await storeWithKey();
    const { sessions, calls, sealer, options } = countingSessions(repository);
    await (await sessions.open('key_1', 'p', 1000)).record(turnOf('first'), 1000);
    // Three turns open the session at once: each core sees the first turn only…
    const opened = await Promise.all([1, 2, 3].map(() => sessions.open('key_1', 'p', 2000)));
    for (const turn of opened) expect(turn.history).toEqual([turnOf('first')]);
    calls.locked = 0;
    calls.opened = 0;
    calls.sealed = 0;
    // …and their replies are stored one after another, each after those before it.
    for (const [i, turn] of opened.entries()) await turn.record(turnOf(`p${i}`), 3000 + i);
    expect(calls).toEqual({ locked: 0, opened: 0, sealed: 3 });
    // What is on disk, read by an instance without this one's memory of the session.
    const other = createSessionService(repository, sealer, { ...options, cachedWindowChars: 0 });
    expect((await other.open('key_1', 'p', 5000)).history).toEqual(
      ['first', 'p0', 'p1', 'p2'].map(turnOf),
    );
  });

  it('store turns of one session handed over at once each after the other, each sealed once and nothing opened again', async () => {
    const { repository } = await storeWithKey();
    const { sessions, calls, sealer, options } = countingSessions(repository);
    await (await sessions.open('key_1', 'p', 1000)).record(turnOf('first'), 1000);
    const opened = await Promise.all([0, 1, 2, 3, 4].map(() => sessions.open('key_1', 'p', 2000)));
    calls.locked = 0;
    calls.opened = 0;
    calls.sealed = 0;
    // Five replies arrive together: none waits for another's write before asking for its own.
    await Promise.all(opened.map((turn, i) => turn.record(turnOf(`p${i}`), 3000 + i)));
    // One write without the lock at most (the others would find the session changed), each
    // locked write after the turn before it, whose window is not decrypted again.
    expect(calls.opened).toBe(0);
    expect(calls.locked).toBeGreaterThanOrEqual(4);
    expect(calls.sealed).toBe(calls.locked + 1);
    const other = createSessionService(repository, sealer, { ...options, cachedWindowChars: 0 });
    const history = (await other.open('key_1', 'p', 5000)).history;
    expect(history[0]).toEqual(turnOf('first'));
    expect(
      history
        .slice(1)
        .map((turn) => turn.message)
        .sort(),
    ).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
  });

  it('keep nothing of a deleted session: its next conversation is stored as any new one', async () => {
    const { repository } = await storeWithKey();
    const { sessions, calls } = countingSessions(repository);
    for (let i = 0; i < 3; i++) {
      await (await sessions.open('key_1', 'p', 1000 + i)).record(turnOf(`old ${i}`), 1000 + i);
    }
    expect(await sessions.delete('key_1', 'p', 2000)).toBe(true);
    calls.locked = 0;
    const begun = await sessions.open('key_1', 'p', 3000);
    expect(begun.history).toEqual([]);
    await begun.record(turnOf('new'), 3000);
    // Stored without the lock: no window sealed for the deleted turns is taken for current.
    expect(calls.locked).toBe(0);
    expect((await sessions.open('key_1', 'p', 4000)).history).toEqual([turnOf('new')]);
  });

  it('open a row that holds the window a turn of the instance sealed without decrypting it, and any other row by decrypting it', async () => {
    const { repository } = await storeWithKey();
    // No window kept in memory: every turn reads the session's row.
    const { sessions, calls, sealer, options } = countingSessions(repository, 0);
    await (await sessions.open('key_1', 'p', 1000)).record(turnOf('first'), 1000);
    calls.opened = 0;
    const next = await sessions.open('key_1', 'p', 2000);
    expect(next.history).toEqual([turnOf('first')]);
    expect(calls.opened).toBe(0);
    // Another instance writes the row: it holds other bytes now, and is decrypted.
    const other = createSessionService(repository, sealer, options);
    await (await other.open('key_1', 'p', 3000)).record(turnOf('other'), 3000);
    const after = await sessions.open('key_1', 'p', 4000);
    expect(after.history).toEqual([turnOf('first'), turnOf('other')]);
    expect(calls.opened).toBe(1);
  });

  it('never take a window sealed for a write that rolled back for what the row holds', async () => {
    const { repository } = await storeWithKey();
    const { sessions, calls, sealer, options } = countingSessions(repository);
    await (await sessions.open('key_1', 'p', 1000)).record(turnOf('first'), 1000);
    const [lost, late] = await Promise.all([1, 2].map(() => sessions.open('key_1', 'p', 2000)));
    // A turn whose write fails with the statements it commits with: nothing of it is stored…
    const failing = { sql: 'insert into no_such_table (id) values (1)', parameters: [] };
    await expect(
      lost?.record(turnOf('lost'), 3000, (work) => UnitOfWork.add(work, failing)),
    ).rejects.toThrow();
    // …another instance stores the next turn, to the count the failed write had…
    const other = createSessionService(repository, sealer, options);
    await (await other.open('key_1', 'p', 3500)).record(turnOf('other'), 3500);
    // …and the late turn of this instance is stored after what the row holds.
    calls.opened = 0;
    await late?.record(turnOf('late'), 4000);
    expect(calls.opened).toBe(1);
    const reader = createSessionService(repository, sealer, { ...options, cachedWindowChars: 0 });
    expect((await reader.open('key_1', 'p', 5000)).history).toEqual(
      ['first', 'other', 'late'].map(turnOf),
    );
  });

  it('store a window read from the database with its oldest turns cut from the bytes read, as sealing it whole would', async () => {
    const { repository } = await storeWithKey();
    const sealer = createTurnSealer(randomBytes(32));
    // No cache: every turn reads its window and writes it from the bytes read.
    const service = (window: number) =>
      createSessionService(repository, sealer, { window, ttlMs: 60_000, cachedWindowChars: 0 });
    const turnOf = (i: number) => ({
      message: `"${i}", [${i}], {${i}} \\ 👋 ß`,
      reply: `re ${i}],["`,
      language: i % 2 === 0 ? ('de' as const) : ('en' as const),
    });
    const say = async (window: number, i: number) =>
      (await service(window).open('key_1', 's', 1000 + i)).record(turnOf(i), 1000 + i);
    const history = async (window: number) =>
      (await service(window).open('key_1', 's', 5000)).history;
    const turns = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, k) => turnOf(from + k));

    for (let i = 1; i <= 3; i++) await say(3, i); // filling the window
    expect(await history(3)).toEqual(turns(1, 3));
    await say(3, 4); // full: the oldest goes
    await say(3, 5);
    expect(await history(3)).toEqual(turns(3, 5));
    // A longer window keeps what was stored and grows.
    await say(5, 6);
    await say(5, 7);
    expect(await history(5)).toEqual(turns(3, 7));
    // A shorter window drops several stored turns at once.
    await say(2, 8);
    expect(await history(5)).toEqual(turns(7, 8));
    // Another instance with the cache on reads the same.
    const cached = createSessionService(repository, sealer, { window: 5, ttlMs: 60_000 });
    expect((await cached.open('key_1', 's', 5000)).history).toEqual(turns(7, 8));
  });
});
