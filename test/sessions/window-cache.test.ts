/**
 * Each instance keeps the windows of its recent sessions in memory (session-service.ts).
 * Two instances on one database (SQLite or PostgreSQL, as the project runs): what one
 * writes or deletes, the other's core sees at its next turn, never a copy from before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CoreAdapter, CoreRequest } from '../../src/core/core-adapter.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (cleanup.length > 0) await cleanup.pop()?.();
});

function recordingCore() {
  const seen: CoreRequest[] = [];
  const core: CoreAdapter = {
    name: 'recording',
    async reply(request) {
      seen.push(request);
      return `reply to ${request.message}`;
    },
  };
  return { core, seen };
}

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
