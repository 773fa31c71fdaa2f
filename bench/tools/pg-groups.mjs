#!/usr/bin/env node
/**
 * PostgreSQL statements committed in groups against the same statements each committed
 * alone, in-process, through plauder's own runner (src/storage/postgres/named-statements.ts):
 * the same pipelined lane, the same named update of a 100-row table (a 9 KB value in one
 * of four, like a session's window), `--inflight` statements per round of I/O; "alone"
 * runs them as writes that name no lock (one Sync each), "grouped" names the row each
 * locks (one Sync per round). Alternating rounds; CPU of this process (plauder's side) and
 * of the rest of the machine (mostly the database) per statement, from /proc/stat.
 *
 *   node bench/tools/pg-groups.mjs [--statements 10000] [--inflight 25] [--rounds 3]
 *                                   (after `npm run build`)
 *
 * Needs PostgreSQL (PLAUDER_BENCH_POSTGRES_URL, default postgres://postgres@127.0.0.1:5432/postgres);
 * creates a database of its own and drops it.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createNamedStatementRunner } from '../../dist/storage/postgres/named-statements.js';

const { values } = parseArgs({
  options: {
    statements: { type: 'string', default: '10000' },
    inflight: { type: 'string', default: '25' },
    rounds: { type: 'string', default: '3' },
  },
});
/** USER_HZ of /proc/stat. */
const TICKS_PER_SECOND = 100;
const statements = Number(values.statements);
const inflight = Number(values.inflight);
const adminUrl =
  process.env.PLAUDER_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `plauder_pg_groups_${process.pid}`;
const url = new URL(adminUrl);
url.pathname = `/${name}`;

const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`create database ${name}`);
const config = { connectionString: url.toString() };
const pool = new pg.Pool({ ...config, max: 1 });
const runner = createNamedStatementRunner({
  pool,
  connect: () => new pg.Client({ ...config, pipeline: true }),
  maxLanes: 1,
  Query: pg.Query,
  typeParser: (oid) => pg.types.getTypeParser(oid, 'text'),
});

try {
  await pool.query('create table probe (k text primary key, n integer not null, v text)');
  await pool.query("insert into probe select 'k' || g, 0, '' from generate_series(1, 100) g");
  const update = 'update probe set n = n + 1, v = $2 where k = $1';
  const window = 'x'.repeat(9000);
  const run = async (grouped, total) => {
    const cpu = process.cpuUsage();
    const machine = machineTicks();
    const started = performance.now();
    for (let done = 0; done < total; done += inflight) {
      const round = [];
      for (let i = 0; i < inflight; i++) {
        const key = `k${1 + ((done + i) % 100)}`;
        const grouping = grouped ? { lock: `probe\0${key}` } : 'alone';
        round.push(runner(update, [key, i % 4 === 0 ? window : 'short'], grouping));
      }
      await Promise.all(round);
    }
    const used = process.cpuUsage(cpu);
    const ours = (used.user + used.system) / total;
    const all = ((machineTicks() - machine) * 1e6) / TICKS_PER_SECOND / total;
    return { ours, rest: all - ours, wall: ((performance.now() - started) * 1000) / total };
  };
  // Warm up both (the first run on the lane parses the statement).
  await run(false, 1000);
  await run(true, 1000);
  const results = { alone: [], grouped: [] };
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = round % 2 === 0 ? [false, true] : [true, false];
    for (const grouped of order) {
      results[grouped ? 'grouped' : 'alone'].push(await run(grouped, statements));
    }
  }
  console.log(`${statements} statements per round, ${inflight} per round of I/O; µs per statement`);
  console.log('| committed | plauder CPU | rest of the machine | wall |');
  console.log('|---|---|---|---|');
  for (const [kind, rounds] of Object.entries(results)) {
    const list = (key) => rounds.map((r) => r[key].toFixed(1)).join(', ');
    console.log(`| ${kind} | ${list('ours')} | ${list('rest')} | ${list('wall')} |`);
  }
} finally {
  await runner.close();
  await pool.end();
  await admin.query(`drop database if exists ${name}`);
  await admin.end();
}

/** CPU ticks of the whole machine (user, nice, system, irq, softirq) since boot. */
function machineTicks() {
  const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq] = fields.slice(1).map(Number);
  return user + nice + system + irq + softirq;
}
