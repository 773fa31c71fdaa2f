/**
 * Concurrent turns on one session (docs/contract.md, "Concurrent turns on one session"): 300 turns with 50 in flight on one
 * sessionId, on one process, on two processes sharing one SQLite file, and on four sharing
 * one PostgreSQL database. Every turn is answered, stored exactly once and counted once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { createTestDatabase, TEST_DIALECT } from '../helpers/test-database.js';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';

const TURNS = 300;
const IN_FLIGHT = 50;
const SESSION = 'busy-session';

let cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step().catch(() => {});
  cleanup = [];
});

/** Sends `TURNS` numbered turns, at most `IN_FLIGHT` at a time, spread over `urls`. */
async function converse(urls: string[], key: string) {
  const answers: { status: number; text: string; reply?: string }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < TURNS) {
      const i = next++;
      const url = urls[i % urls.length] as string;
      const path = i % 2 === 0 ? '/api/chat' : '/api/chat-en';
      const res = await chat({ url }, key, { message: `turn ${i}`, sessionId: SESSION }, path);
      answers[i] = { status: res.status, text: res.text, reply: res.json?.reply };
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return answers;
}

/** The placeholder core says how many earlier turns it was given: `… 17 …` = 16 earlier turns. */
const seen = (reply: string) => Number(/(\d+)/.exec(reply)?.[1]) - 1;

async function expectAllKept(owner: TestServer, id: string, key: string, urls: string[]) {
  const answers = await converse(urls, key);
  const failures = answers.filter((a) => a.status !== 200 || a.text.includes('"error"'));
  expect(failures.map((a) => `${a.status} ${a.text.slice(0, 100)}`)).toEqual([]);

  const month = owner.services.quota.monthOf(Date.now()).month;
  expect(await owner.services.usage.used(id, month)).toBe(TURNS);

  const stored = await http(`${owner.url}/api/sessions/${SESSION}`, { key });
  expect(stored.status).toBe(200);
  const turns = stored.json.turns as { message: string; reply: string }[];
  expect(turns).toHaveLength(TURNS);
  // Each turn exactly once, with the reply its client got.
  expect(new Set(turns.map((t) => t.message)).size).toBe(TURNS);
  for (const turn of turns) {
    const i = Number(turn.message.slice('turn '.length));
    expect(turn.reply).toBe(answers[i]?.reply);
  }
  // A turn's core saw only turns stored before it: at position p, at most p earlier turns.
  for (const [position, turn] of turns.entries()) {
    expect(seen(turn.reply)).toBeLessThanOrEqual(position);
  }
  // And it saw every turn stored before it began: the last turn saw most of the others.
  expect(Math.max(...turns.map((t) => seen(t.reply)))).toBeGreaterThanOrEqual(TURNS - IN_FLIGHT);
}

const env = {
  PLAUDER_CORE: 'placeholder',
  // Keep every turn, so that each one can be checked.
  PLAUDER_SESSION_WINDOW: String(TURNS),
  PLAUDER_PLANS: 'standard=1000',
};

describe('300 turns with 50 in flight on one session', () => {
  it('are all answered, stored once and counted once on one process', async () => {
    const server = await startTestServer({ env });
    cleanup.push(() => server.close());
    const { id, key } = await server.createKey();
    await expectAllKept(server, id, key, [server.url]);
  });

  const instances = TEST_DIALECT === 'sqlite' ? 2 : 4;
  it(`are all answered, stored once and counted once on ${instances} processes sharing one ${TEST_DIALECT} database`, async () => {
    const database = await createTestDatabase();
    cleanup.push(() => database.drop());
    const owner = await startTestServer({ database, env });
    cleanup.push(() => owner.close());
    const { id, key } = await owner.createKey();
    const processes = await Promise.all(
      Array.from({ length: instances }, () => startServerProcess(owner.env)),
    );
    for (const p of processes) cleanup.push(() => p.stop());
    await expectAllKept(
      owner,
      id,
      key,
      processes.map((p: ServerProcess) => p.url),
    );
  });
});
