#!/usr/bin/env node
/**
 * Database round trips per chat request on PostgreSQL: every query the `pg` driver sends
 * (BEGIN and COMMIT included; a group of statements committed together counts once) is
 * counted while the app answers requests, in-process (`app.inject`, no sockets), one at a
 * time, so no grouping of concurrent requests helps, and in the last row 50 at once.
 *
 *   node bench/tools/round-trips.mjs [--requests 400] [--json]   (after `npm run build`)
 *
 * Needs PostgreSQL (PLAUDER_BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres);
 * creates a database of its own and drops it. Rows: with a sessionId (20-turn windows over
 * 10 sessions), without one, and a session written alternately by two instances (each
 * turn finds the other's write, the slow way), and 50 sessions with one turn each in flight
 * at once. Each after one warm-up request per session.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { buildApp } from '../../dist/app.js';
import { loadConfig } from '../../dist/config/config.js';
import { createBuiltinCore } from '../../dist/core/builtin/create-builtin-core.js';
import { createServices } from '../../dist/services.js';
import { createStore } from '../../dist/storage/create-database.js';
import { loadSecret } from '../../dist/storage/secret.js';
import { MESSAGE } from '../lib/conversation.mjs';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '400' },
    json: { type: 'boolean', default: false },
  },
});
const requests = Number(values.requests);
/** Requests in flight at once in the last row. */
const CONCURRENT = 50;
const adminUrl =
  process.env.PLAUDER_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `plauder_round_trips_${process.pid}`;

let queries = 0;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function counted(...args) {
  queries++;
  return query.apply(this, args);
};

const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`create database "${name}"`);
const url = new URL(adminUrl);
url.pathname = `/${name}`;
const env = {
  PLAUDER_DATABASE_URL: url.href,
  PLAUDER_SECRET: Buffer.alloc(32, 7).toString('base64'),
  PLAUDER_PLANS: 'bench=1000000000',
  PLAUDER_LOG_LEVEL: 'silent',
};

const instances = [];
async function instance() {
  const config = loadConfig(env);
  const store = await createStore(config.database);
  const services = createServices(config, store, loadSecret(config.secret), Date.now);
  const app = await buildApp(config, { services, core: createBuiltinCore() });
  instances.push({ app, store });
  return { app, services };
}

const rows = [];
try {
  const a = await instance();
  const b = await instance();
  const issued = await a.services.keys.create({ name: 'round trips', plan: 'bench' });
  const headers = {
    authorization: `Bearer ${issued.value.key}`,
    'content-type': 'application/json',
  };
  const ask = async (app, sessionId) => {
    const body = JSON.stringify(sessionId ? { message: MESSAGE, sessionId } : { message: MESSAGE });
    const res = await app.inject({ method: 'POST', url: '/api/chat', headers, payload: body });
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
  };
  const measure = async (what, run) => {
    const before = queries;
    for (let i = 0; i < requests; i++) await run(i);
    rows.push({ what, perRequest: (queries - before) / requests });
  };

  for (let i = 0; i < 10; i++) for (let t = 0; t < 20; t++) await ask(a.app, `s${i}`);
  await ask(a.app);
  await measure('with a sessionId (10 sessions, 20-turn windows)', (i) => ask(a.app, `s${i % 10}`));
  await measure('without a sessionId', () => ask(a.app));
  await measure('one session, two instances taking turns', (i) =>
    ask((i % 2 === 0 ? a : b).app, 'shared'),
  );
  // Concurrent turns: their statements share groups (one query each, see
  // src/storage/postgres/named-statements.ts).
  for (let i = 0; i < CONCURRENT; i++) await ask(a.app, `c${i}`);
  const before = queries;
  for (let done = 0; done < requests; done += CONCURRENT) {
    await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => ask(a.app, `c${i}`)));
  }
  const sent = Math.ceil(requests / CONCURRENT) * CONCURRENT;
  rows.push({
    what: `with a sessionId, ${CONCURRENT} at once (${CONCURRENT} sessions)`,
    perRequest: (queries - before) / sent,
  });
} finally {
  for (const { app, store } of instances) {
    await app.close();
    await store.close();
  }
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.end();
}

if (values.json) {
  process.stdout.write(`${JSON.stringify({ requests, rows })}\n`);
} else {
  process.stdout.write(
    `PostgreSQL round trips per request (${requests} requests each, one at a time unless said)\n\n`,
  );
  process.stdout.write('| request | round trips |\n|---|---:|\n');
  for (const row of rows) process.stdout.write(`| ${row.what} | ${row.perRequest.toFixed(2)} |\n`);
}
