#!/usr/bin/env node
/**
 * CPU per turn when several turns of one session open it together and their replies are
 * stored one after another, as when a client sends a few requests of one conversation at
 * once: every turn but the first finds the session stored since it opened it. In process
 * on SQLite, with plauder's own session service and sealer: no HTTP, core or quota. 100
 * sessions with full 20-turn windows; each round opens the next session `--turns` times at
 * once, then stores each turn. `--turns 1` is the control (no turn finds the session
 * changed). With `--together` the replies are handed over at once, none waiting for the
 * write of another (as when they arrive in one turn of the event loop). Run it on two
 * checkouts one after the other, alternating, to compare them (bench/README.md, "Concurrent
 * turns of one session").
 *
 *   node bench/tools/concurrent-turns.mjs <checkout> [--turns 3] [--rounds 2000] [--together]
 *     [--postgres]
 *
 * `--postgres` runs it on a database of its own on the local PostgreSQL
 * (PLAUDER_BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres), created
 * and dropped by the tool; the CPU is this process's only, not the PostgreSQL server's.
 *
 * `<checkout>` is a built tree (its dist/): this one, or an earlier commit checked out with
 * `git worktree add` (and node_modules linked). Prints the CPU µs per turn (opening it and
 * storing it; process CPU time, user + system), after 300 rounds of warm-up.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: {
    turns: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '2000' },
    together: { type: 'boolean', default: false },
    postgres: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const root = path.resolve(positionals[0] ?? '.');
const turns = Number(values.turns);
const rounds = Number(values.rounds);
const SESSIONS = 100;
const WINDOW = 20;

const { loadConfig } = await import(`${root}/dist/config/config.js`);
const { createStore } = await import(`${root}/dist/storage/create-database.js`);
const { createKeysRepository } = await import(
  `${root}/dist/storage/repositories/keys-repository.js`
);
const { createSessionsRepository } = await import(
  `${root}/dist/storage/repositories/sessions-repository.js`
);
const { createSessionService } = await import(`${root}/dist/sessions/session-service.js`);
const { createTurnSealer } = await import(`${root}/dist/sessions/turn-sealer.js`);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plauder-concurrent-turns-'));
const adminUrl =
  process.env.PLAUDER_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const pgName = `plauder_concurrent_turns_${process.pid}`;
/** Runs one statement on the PostgreSQL server's admin database. */
async function admin(sql) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
let databaseUrl = `sqlite:${path.join(dir, 'turns.db')}`;
if (values.postgres) {
  await admin(`create database "${pgName}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${pgName}`;
  databaseUrl = url.href;
}
const removeDatabase = async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  if (values.postgres) await admin(`drop database "${pgName}"`);
};
// The secret is the store's, not the sealer's (PostgreSQL requires one in the configuration).
const config = loadConfig({
  PLAUDER_DATABASE_URL: databaseUrl,
  PLAUDER_SECRET: randomBytes(32).toString('base64'),
});
const store = await createStore(config.database).catch(async (error) => {
  await removeDatabase();
  throw error;
});
try {
  const key = {
    id: 'key_1',
    name: 'k',
    plan: 'standard',
    active: true,
    hash: 'h',
    displayPrefix: 'p',
  };
  await createKeysRepository(store.db).create(key, 0);
  const sessions = createSessionService(
    createSessionsRepository(store.db, store.features),
    createTurnSealer(randomBytes(32)),
    { window: WINDOW, ttlMs: 3_600_000 },
  );
  const turnOf = (i) => ({
    message: `Wie viele Anfragen hat der Plan ${i}? `.repeat(3),
    reply: `Im Plan Standard hast du 1000 Anfragen pro Kalendermonat. ${i} `.repeat(2),
    language: 'de',
  });
  let now = Date.now();
  for (let s = 0; s < SESSIONS; s++) {
    for (let t = 0; t < WINDOW; t++) {
      await (await sessions.open(key.id, `s${s}`, now)).record(turnOf(t), now);
    }
  }
  const round = async (r) => {
    const id = `s${r % SESSIONS}`;
    const opened = await Promise.all(
      Array.from({ length: turns }, () => sessions.open(key.id, id, now)),
    );
    if (values.together) {
      await Promise.all(opened.map((session) => session.record(turnOf(r), ++now)));
    } else {
      for (const session of opened) await session.record(turnOf(r), ++now);
    }
  };
  for (let r = 0; r < 300; r++) await round(r);
  const start = process.cpuUsage();
  for (let r = 0; r < rounds; r++) await round(r);
  const used = process.cpuUsage(start);
  const perTurn = (used.user + used.system) / (rounds * turns);
  const stored = values.together ? 'stored together' : 'stored one after another';
  console.log(
    `${root}: ${turns} turn(s) at once, ${stored}${values.postgres ? ', PostgreSQL' : ''}, ${perTurn.toFixed(1)} µs CPU per turn`,
  );
} finally {
  await store.close();
  await removeDatabase();
}
