/**
 * Writers of one session (session-service.ts): two instances on one database (SQLite or
 * PostgreSQL, as the project runs), turns stored after others stored since they opened the
 * session, a session deleted under a running turn. What one writes or deletes, the next
 * turn's core sees; every turn is stored after those before it, none is lost.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
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

describe('two instances of one database', () => {
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

  it('forget a session deleted on the same instance at once', async () => {
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
    const options = { window: 20, ttlMs: 60_000, maxBytes: 1_048_576 };
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

/** A store with one key and its sessions repository. */
async function storeWithKey() {
  const database = await createTestDatabase();
  cleanup.push(() => database.drop());
  const store = await createStore(loadConfig(database.env).database);
  cleanup.push(() => store.close());
  await createKeysRepository(store.db).create(
    { id: 'key_1', name: 'k', plan: 'standard', active: true, hash: 'h', displayPrefix: 'p' },
    0,
  );
  return { repository: createSessionsRepository(store.db, store.features) };
}

const turnOf = (text: string) => ({
  message: text,
  reply: `re ${text}`,
  language: 'de' as const,
});

/**
 * A session service over `repository` that counts its locked writes, opened windows and
 * seals, and how to make another on the same database.
 */
function sessionsOn(repository: SessionsRepository) {
  const sealer = createTurnSealer(randomBytes(32));
  const calls = { locked: 0, opened: 0, sealed: 0 };
  const counting: SessionsRepository = Object.assign({}, repository, {
    appendTurn: (...args: Parameters<SessionsRepository['appendTurn']>) => {
      calls.locked++;
      return repository.appendTurn(...args);
    },
  });
  const countingSealer: TurnSealer = Object.assign({}, sealer, {
    openJson: (...args: Parameters<TurnSealer['openJson']>) => {
      calls.opened++;
      return sealer.openJson(...args);
    },
    sealJsonBytes: (...args: Parameters<TurnSealer['sealJsonBytes']>) => {
      calls.sealed++;
      return sealer.sealJsonBytes(...args);
    },
  });
  const options = { window: 20, ttlMs: 60_000, maxBytes: 1_048_576 };
  const sessions = createSessionService(counting, countingSealer, options);
  return { sessions, calls, sealer, options };
}

describe('turns of one session', () => {
  it('are stored one after another, each after the turns stored since it opened the session', async () => {
    const { repository } = await storeWithKey();
    const { sessions, sealer, options } = sessionsOn(repository);
    await (await sessions.open('key_1', 'p', 1000)).record(turnOf('first'), 1000);
    // Three turns open the session at once: each core sees the first turn only…
    const opened = await Promise.all([1, 2, 3].map(() => sessions.open('key_1', 'p', 2000)));
    for (const turn of opened) expect(turn.history).toEqual([turnOf('first')]);
    // …and their replies are stored one after another, each after those before it.
    for (const [i, turn] of opened.entries()) await turn.record(turnOf(`p${i}`), 3000 + i);
    // What is on disk, read by another instance.
    const other = createSessionService(repository, sealer, options);
    expect((await other.open('key_1', 'p', 5000)).history).toEqual(
      ['first', 'p0', 'p1', 'p2'].map(turnOf),
    );
  });

  it('handed over at once are all stored, each after another, each sealed once and no window opened again', async () => {
    const { repository } = await storeWithKey();
    const { sessions, calls, sealer, options } = sessionsOn(repository);
    await (await sessions.open('key_1', 'p', 1000)).record(turnOf('first'), 1000);
    const opened = await Promise.all([0, 1, 2, 3, 4].map(() => sessions.open('key_1', 'p', 2000)));
    calls.locked = 0;
    calls.opened = 0;
    calls.sealed = 0;
    // Five replies arrive together: none waits for another's write before asking for its own.
    await Promise.all(opened.map((turn, i) => turn.record(turnOf(`p${i}`), 3000 + i)));
    // One write without the lock at most (the others would find the session changed), each
    // locked write after the turn before it, whose window this process sealed (see
    // `createRecentSeals`) and does not decrypt again.
    expect(calls.opened).toBe(0);
    expect(calls.locked).toBeGreaterThanOrEqual(4);
    expect(calls.sealed).toBe(calls.locked + 1);
    const other = createSessionService(repository, sealer, options);
    const history = (await other.open('key_1', 'p', 5000)).history;
    expect(history[0]).toEqual(turnOf('first'));
    expect(
      history
        .slice(1)
        .map((turn) => turn.message)
        .sort(),
    ).toEqual(['p0', 'p1', 'p2', 'p3', 'p4']);
  });

  it('of a deleted session bring nothing of it back: its next conversation is stored as any new one', async () => {
    const { repository } = await storeWithKey();
    const { sessions } = sessionsOn(repository);
    for (let i = 0; i < 3; i++) {
      await (await sessions.open('key_1', 'p', 1000 + i)).record(turnOf(`old ${i}`), 1000 + i);
    }
    expect(await sessions.delete('key_1', 'p', 2000)).toBe(true);
    const begun = await sessions.open('key_1', 'p', 3000);
    expect(begun.history).toEqual([]);
    await begun.record(turnOf('new'), 3000);
    expect((await sessions.open('key_1', 'p', 4000)).history).toEqual([turnOf('new')]);
  });

  it('are stored after what the row holds, not after a window sealed for a write that rolled back', async () => {
    const { repository } = await storeWithKey();
    const { sessions, calls, sealer, options } = sessionsOn(repository);
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
    // …and the late turn of this instance is stored after what the row holds, decrypted.
    calls.opened = 0;
    await late?.record(turnOf('late'), 4000);
    expect(calls.opened).toBe(1);
    const reader = createSessionService(repository, sealer, options);
    expect((await reader.open('key_1', 'p', 5000)).history).toEqual(
      ['first', 'other', 'late'].map(turnOf),
    );
  });

  it('keep the last turns of the window, whatever their strings hold, as the window grows and shrinks', async () => {
    const { repository } = await storeWithKey();
    const sealer = createTurnSealer(randomBytes(32));
    const service = (window: number) =>
      createSessionService(repository, sealer, { window, ttlMs: 60_000, maxBytes: 1_048_576 });
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
  });

  it('stored by one service turn after turn, from the bytes it kept, open elsewhere to the same turns', async () => {
    const { repository } = await storeWithKey();
    const sealer = createTurnSealer(randomBytes(32));
    const text = fc.string({ unit: 'binary', maxLength: 30 });
    const turn = fc.record({ message: text, reply: text, language: fc.constantFrom('de', 'en') });
    let session = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.array(turn, { minLength: 1, maxLength: 9 }),
        async (window, said) => {
          const id = `p${session++}`;
          const writer = createSessionService(repository, sealer, {
            window,
            ttlMs: 60_000,
            maxBytes: 1_048_576,
          });
          for (const [i, t] of said.entries()) {
            await (await writer.open('key_1', id, 1000 + i)).record(t, 1000 + i);
          }
          const reader = createSessionService(repository, sealer, {
            window,
            ttlMs: 60_000,
            maxBytes: 1_048_576,
          });
          expect((await reader.open('key_1', id, 2000)).history).toEqual(said.slice(-window));
        },
      ),
      { numRuns: 40 },
    );
  });
});
