#!/usr/bin/env node
/**
 * Two ways to store a session's turn, side by side in one process, on plauder's own migrated
 * SQLite schema and with its own sealer: what `plauder-session` does now (the window sealed
 * whole, one `UPDATE` of the session row), and append-only turn rows (one turn sealed, one
 * `INSERT` into `turns`, the session row's head updated, the turn that left the window
 * deleted). Each stores a turn of the bench conversation (lib/conversation.mjs) on the next
 * of 100 sessions with 20-turn windows, in write groups of 1 and of 50 (one `BEGIN
 * IMMEDIATE … COMMIT` each, as the direct runner's group commit). Also opening the memory
 * that a turn reads when it is not in the window cache: one sealed window, or 20 sealed turns.
 *
 * Prints CPU µs per turn, medians of --rounds rounds (default 5), the two ways alternating
 * in every round and in reverse order every other round.
 *
 *   node bench/tools/turn-storage.mjs [--rounds 5] [--turns 20000]
 *
 * Needs dist/ (npm run build). Seals with a fixed secret in a temporary directory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { loadConfig } from '../../dist/config/config.js';
import { sealWindow } from '../../dist/sessions/session-service.js';
import { createTurnSealer, jsonArrayBytes } from '../../dist/sessions/turn-sealer.js';
import { createStore } from '../../dist/storage/create-database.js';
import { conversation } from '../lib/conversation.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    turns: { type: 'string', default: '20000' },
  },
});
const ROUNDS = Number(values.rounds);
const TURNS = Number(values.turns);
const SESSIONS = 100;
const WINDOW = 20;
const KEY_ID = 'key_bench';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plauder-turn-storage-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, 'p.db');
const config = loadConfig({
  PLAUDER_DATABASE_URL: `sqlite:${file}`,
  PLAUDER_SECRET: Buffer.alloc(32, 7).toString('base64'),
});
// Migrated by plauder itself, then opened as plauder opens it (open-sqlite.ts).
await (await createStore(config.database)).close();
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.pragma('cache_size = -4096');

const sealer = createTurnSealer(Buffer.alloc(32, 7));
const history = await conversation(WINDOW);
const entryOf = (turn, at) => [turn.message, turn.reply, turn.language, at];
const encode = (entry) => Buffer.from(JSON.stringify(entry));
const hashes = Array.from({ length: SESSIONS }, (_, i) => sealer.sessionHash(KEY_ID, `s${i}`));
const turnBinding = (hash, seq) => `${KEY_ID}\0${hash}\0turn\0${seq}`;
const windowBinding = (hash, count) => `${KEY_ID}\0${hash}\0window\0${count}`;

db.prepare(
  `insert into api_keys (id, name, plan, active, created_at, updated_at) values (?, 'b', 'standard', 1, 0, 0)`,
).run(KEY_ID);
const insertSession = db.prepare(
  'insert into sessions (key_id, session_hash, created_at, last_active_at, turn_count, sealed_window) values (?, ?, 0, 0, ?, ?)',
);
const insertTurn = db.prepare(
  'insert into turns (key_id, session_hash, seq, language, created_at, sealed) values (?, ?, ?, ?, ?, ?)',
);

// The window way: `windowSessions` rows with their sealed windows, and in memory what the
// window cache keeps of each (its turns encoded one by one).
const windowHashes = hashes.map((h) => `w${h}`);
const kept = windowHashes.map(() => history.map((t, i) => encode(entryOf(t, i))));
const windowCount = windowHashes.map(() => WINDOW);
const windowTurns = history.map((t, at) => ({ ...t, createdAt: at }));
for (const hash of windowHashes) {
  insertSession.run(KEY_ID, hash, WINDOW, sealWindow(sealer, KEY_ID, hash, WINDOW, windowTurns));
}
// The rows way: a head row per session and its last 20 turns, each sealed alone.
const rowHashes = hashes.map((h) => `r${h}`);
const rowCount = rowHashes.map(() => WINDOW);
for (const hash of rowHashes) {
  insertSession.run(KEY_ID, hash, WINDOW, null);
  for (const [seq, turn] of history.entries()) {
    const sealed = sealer.sealJson(entryOf(turn, seq), turnBinding(hash, seq + 1));
    insertTurn.run(KEY_ID, hash, seq + 1, turn.language, seq, sealed);
  }
}

const replaceWindow = db.prepare(
  'update sessions set turn_count = turn_count + 1, last_active_at = ?, sealed_window = ? where key_id = ? and session_hash = ? and turn_count = ?',
);
const updateHead = db.prepare(
  'update sessions set turn_count = turn_count + 1, last_active_at = ? where key_id = ? and session_hash = ? and turn_count = ?',
);
const dropTurn = db.prepare('delete from turns where key_id = ? and session_hash = ? and seq = ?');
const readWindow = db.prepare(
  'select turn_count, sealed_window from sessions where key_id = ? and session_hash = ?',
);
const readTurns = db.prepare(
  'select seq, sealed from turns where key_id = ? and session_hash = ? and seq > ? order by seq',
);
const begin = db.prepare('begin immediate');
const commit = db.prepare('commit');
const turn = history[WINDOW - 1];

/** One turn the window's way: seal the kept window with the new turn, replace the row. */
const storeWindow = (n) => {
  const i = n % SESSIONS;
  const hash = windowHashes[i];
  const count = windowCount[i];
  const encoded = [...kept[i], encode(entryOf(turn, n))].slice(-WINDOW);
  const sealed = sealer.sealJsonBytes(jsonArrayBytes(encoded), windowBinding(hash, count + 1));
  if (replaceWindow.run(n, sealed, KEY_ID, hash, count).changes !== 1) throw new Error('lost');
  kept[i] = encoded;
  windowCount[i] = count + 1;
};
/** One turn the rows' way: seal it, insert it, move the head, drop the turn that left. */
const storeRow = (n) => {
  const i = n % SESSIONS;
  const hash = rowHashes[i];
  const seq = rowCount[i] + 1;
  const sealed = sealer.sealJson(entryOf(turn, n), turnBinding(hash, seq));
  insertTurn.run(KEY_ID, hash, seq, turn.language, n, sealed);
  if (updateHead.run(n, KEY_ID, hash, seq - 1).changes !== 1) throw new Error('lost');
  dropTurn.run(KEY_ID, hash, seq - WINDOW);
  rowCount[i] = seq;
};
/** Opens a session's memory the window's way: its row, one decryption. */
const openWindow = (n) => {
  const hash = windowHashes[n % SESSIONS];
  const row = readWindow.get(KEY_ID, hash);
  const value = sealer.openJson(row.sealed_window, windowBinding(hash, row.turn_count));
  if (!Array.isArray(value) || value.length !== WINDOW) throw new Error('window did not open');
};
/** Opens it the rows' way: its last 20 turns, one decryption each. */
const openRows = (n) => {
  const i = n % SESSIONS;
  const hash = rowHashes[i];
  const rows = readTurns.all(KEY_ID, hash, rowCount[i] - WINDOW);
  for (const row of rows) {
    if (!Array.isArray(sealer.openJson(row.sealed, turnBinding(hash, row.seq)))) {
      throw new Error('turn did not open');
    }
  }
  if (rows.length !== WINDOW) throw new Error(`${rows.length} turns`);
};

let serial = 0;
/** CPU µs per turn of `count` turns in groups of `group`. */
const measure = (store, group, count) => {
  const start = process.cpuUsage();
  for (let done = 0; done < count; done += group) {
    begin.run();
    for (let j = 0; j < group; j++) store(serial++);
    commit.run();
    // The WAL is started over now and then, as plauder's checkpoints do.
    if (done % 2000 < group) db.pragma('wal_checkpoint(TRUNCATE)');
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
};
const measureReads = (open, count) => {
  const start = process.cpuUsage();
  for (let n = 0; n < count; n++) open(n);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
};

const rows = {
  'store, groups of 1: window': [],
  'store, groups of 1: rows': [],
  'store, groups of 50: window': [],
  'store, groups of 50: rows': [],
  'open from the database: window': [],
  'open from the database: rows': [],
};
const ways = [
  ['window', storeWindow, openWindow],
  ['rows', storeRow, openRows],
];
for (const [, store, open] of ways) {
  measure(store, 50, TURNS / 10);
  measureReads(open, TURNS / 10);
}
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 === 0 ? ways : [...ways].reverse();
  for (const [name, store, open] of order) {
    rows[`store, groups of 1: ${name}`].push(measure(store, 1, TURNS / 4));
    rows[`store, groups of 50: ${name}`].push(measure(store, 50, TURNS));
    rows[`open from the database: ${name}`].push(measureReads(open, TURNS));
  }
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const sizes = {
  window: sealWindow(
    sealer,
    KEY_ID,
    'x',
    1,
    history.map((t, at) => ({ ...t, createdAt: at })),
  ).length,
  turn: sealer.sealJson(entryOf(turn, 0), 'x').length,
};
console.log(
  `Turn storage on SQLite, in process (${process.version}, ${ROUNDS} rounds, ${TURNS} turns per store row, medians; sealed window ${sizes.window} bytes, sealed turn ${sizes.turn} bytes)\n`,
);
console.log('| measured | CPU µs per turn | rounds |');
console.log('|---|---:|---|');
for (const [name, list] of Object.entries(rows)) {
  console.log(
    `| ${name} | ${median(list).toFixed(1)} | ${list.map((v) => v.toFixed(1)).join(', ')} |`,
  );
}
db.close();
