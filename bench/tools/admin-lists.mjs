#!/usr/bin/env node
/**
 * The admin lists at scale (docs/admin.md, "Lists: paging, search, filters"): seeds KEYS keys
 * (varied names, two plans, some inactive, half with usage this month) in one transaction
 * through plauder's own store (dist/), starts the built server with an admin token, and
 * measures `GET /admin/v1/keys` and `GET /admin/v1/usage` one request after the other: each
 * query ROUNDS times, then a walk through every key with `limit=500` and the cursor.
 * Needs `npm run build` first.
 *
 *   node bench/tools/admin-lists.mjs [--keys 100000] [--rounds 200]
 *     [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 *
 * Without --database-url the database is SQLite in a temporary directory; with it, a
 * database of its own is created on that server and dropped afterwards.
 * Prints a table (p50 / p99 / max in ms per query) and one JSON line.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../../dist/config/config.js';
import { displayPrefix, generateKey, hashKey } from '../../dist/keys/key-format.js';
import { createStore } from '../../dist/storage/create-database.js';
import { freePort } from '../lib/children.mjs';

const { values } = parseArgs({
  options: {
    keys: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '200' },
    'database-url': { type: 'string' },
  },
});
const KEYS = Number(values.keys);
const ROUNDS = Number(values.rounds);
const TOKEN = 'bench-admin-token-0123456789abcdef';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(path.join(tmpdir(), 'plauder-admin-lists-'));

let databaseUrl = `sqlite:${path.join(dir, 'lists.db')}`;
let dropDatabase = async () => {};
if (values['database-url']) {
  const name = `plauder_bench_lists_${process.pid}`;
  const adminClient = new pg.Client({ connectionString: values['database-url'] });
  await adminClient.connect();
  await adminClient.query(`create database ${name}`);
  await adminClient.end();
  const url = new URL(values['database-url']);
  url.pathname = `/${name}`;
  databaseUrl = url.toString();
  dropDatabase = async () => {
    const client = new pg.Client({ connectionString: values['database-url'] });
    await client.connect();
    await client.query(`drop database if exists ${name} with (force)`);
    await client.end();
  };
}

const env = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PLAUDER_')),
  ),
  PLAUDER_DATABASE_URL: databaseUrl,
  // PostgreSQL needs one (every instance the same); SQLite would keep its own beside the file.
  PLAUDER_SECRET: randomBytes(32).toString('base64'),
  PLAUDER_ADMIN_TOKEN: TOKEN,
  PLAUDER_CORE: 'placeholder',
  PLAUDER_LOG_LEVEL: 'warn',
};

const WORDS = ['shop', 'bot', 'support', 'mobile', 'crm', 'intranet', 'agent', 'test', 'app'];
const TEAMS = ['Berlin', 'Hamburg', 'köln', 'Wien', 'Zürich', 'basel', 'Graz', 'Bern'];
const month = new Date().toISOString().slice(0, 7);

async function seed() {
  const started = performance.now();
  const store = await createStore(loadConfig(env).database);
  const now = Date.now();
  const BATCH = 500;
  await store.db.transaction().execute(async (trx) => {
    for (let start = 0; start < KEYS; start += BATCH) {
      const rows = [];
      for (let i = start; i < Math.min(start + BATCH, KEYS); i++) {
        const key = generateKey();
        const id = `key_${i.toString(36).padStart(16, '0')}`;
        const name = `${TEAMS[i % TEAMS.length]} ${WORDS[(i >> 3) % WORDS.length]} ${i}`;
        rows.push({ i, id, key, name, createdAt: now - (KEYS - i) * 1000 });
      }
      await trx
        .insertInto('api_keys')
        .values(
          rows.map((r) => ({
            id: r.id,
            name: r.name,
            plan: r.i % 3 === 0 ? 'plus' : 'standard',
            active: r.i % 7 === 0 ? 0 : 1,
            created_at: r.createdAt,
            updated_at: r.createdAt,
            revoked_at: null,
          })),
        )
        .execute();
      await trx
        .insertInto('key_secrets')
        .values(
          rows.map((r) => ({
            hash: hashKey(r.key),
            key_id: r.id,
            display_prefix: displayPrefix(r.key),
            created_at: r.createdAt,
            expires_at: null,
          })),
        )
        .execute();
      const used = rows.filter((r) => r.i % 2 === 0);
      await trx
        .insertInto('usage')
        .values(used.map((r) => ({ key_id: r.id, month, used: r.i % 1000 })))
        .execute();
    }
  });
  await store.close();
  return Math.round(performance.now() - started);
}

const seedMs = await seed();
const port = await freePort();
const server = spawn(process.execPath, [path.join(root, 'dist/cli/main.js'), 'serve'], {
  env: { ...env, PORT: String(port) },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
for (;;) {
  try {
    if ((await fetch(`${base}/readyz`)).ok) break;
  } catch {}
  await new Promise((resolve) => setTimeout(resolve, 100));
}

async function get(pathAndQuery) {
  const started = performance.now();
  const res = await fetch(`${base}/admin/v1/${pathAndQuery}`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  const body = await res.json();
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${pathAndQuery}: ${res.status} ${JSON.stringify(body)}`);
  return { ms, body };
}

const quantile = (sorted, q) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
const results = [];
const all = [];
function record(name, times, matched) {
  const sorted = [...times].sort((a, b) => a - b);
  all.push(...times);
  results.push({
    query: name,
    matched,
    n: times.length,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted.at(-1),
  });
}

// A search that finds one key only reads every name: the slowest search there is.
const rareName = `${TEAMS[(KEYS - 3) % TEAMS.length]} ${WORDS[((KEYS - 3) >> 3) % WORDS.length]} ${KEYS - 3}`;
const QUERIES = [
  'keys',
  'keys?limit=500',
  'keys?sort=-created',
  'keys?sort=name',
  'keys?sort=-name&limit=100',
  'keys?plan=plus',
  'keys?active=false',
  'keys?plan=plus&active=false&sort=name',
  'keys?q=bot',
  'keys?q=zürich',
  `keys?q=${encodeURIComponent(rareName)}`,
  'keys?q=no-such-key',
  'usage',
  'usage?q=shop&sort=-name',
];
try {
  for (const query of QUERIES) {
    for (let i = 0; i < 10; i++) await get(query); // warm-up
    const times = [];
    let matched = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const { ms, body } = await get(query);
      times.push(ms);
      matched = body.page.total;
    }
    record(query, times, matched);
    const last = results.at(-1);
    process.stderr.write(
      `${query}: p50 ${last.p50.toFixed(1)} ms, p99 ${last.p99.toFixed(1)} ms\n`,
    );
  }
  // Every key once, 500 at a time, after the cursor: the deep pages cost what the first does.
  const walk = [];
  let cursor = null;
  let seen = 0;
  do {
    const { ms, body } = await get(`keys?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    walk.push(ms);
    seen += body.keys.length;
    cursor = body.page.nextCursor;
  } while (cursor);
  if (seen !== KEYS) throw new Error(`the walk saw ${seen} keys of ${KEYS}`);
  record('keys?limit=500&cursor=… (every page)', walk, seen);
} finally {
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  await dropDatabase();
  rmSync(dir, { recursive: true, force: true });
}

const dialect = databaseUrl.startsWith('sqlite') ? 'sqlite' : 'postgres';
const fmt = (ms) => ms.toFixed(1);
console.log(`\n${KEYS} keys, ${dialect}, seeded in ${seedMs} ms; ${ROUNDS} requests per query\n`);
console.log('| query | matching keys | p50 ms | p99 ms | max ms |');
console.log('|---|---|---|---|---|');
for (const r of results)
  console.log(`| \`${r.query}\` | ${r.matched} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.max)} |`);
const sortedAll = [...all].sort((a, b) => a - b);
console.log(
  `| all requests | | ${fmt(quantile(sortedAll, 0.5))} | ${fmt(quantile(sortedAll, 0.99))} | ${fmt(sortedAll.at(-1))} |`,
);
console.log(
  JSON.stringify({ keys: KEYS, dialect, seedMs, p99: quantile(sortedAll, 0.99), results }),
);
