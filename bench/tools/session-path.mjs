#!/usr/bin/env node
/**
 * The session path alone, in process: `sessions.open` and `record` of a turn, 50 in flight,
 * each turn on the next of N seeded sessions (20-turn windows, as `sessions-10k`), with no
 * HTTP, quota or core around it. Prints CPU and wall time per turn and, with `--gc`, what the
 * garbage collector saw (the run repeated under `--trace-gc-nvp`): KB allocated and promoted
 * to the old generation per turn, scavenges and other collections.
 *
 *   node bench/tools/session-path.mjs <checkout> [--sessions 10000] [--turns 20000] [--gc]
 *
 * `<checkout>` is a built tree (its dist/ and bench/tools/seed-database.mjs): this one, or an
 * earlier commit in a `git worktree` (node_modules linked), to compare builds alternately.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: {
    sessions: { type: 'string', default: '10000' },
    turns: { type: 'string', default: '20000' },
    gc: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const root = path.resolve(positionals[0] ?? '.');
const sessionCount = Number(values.sessions);
const measured = Number(values.turns);
const warmup = Math.min(measured, 5000);
const IN_FLIGHT = 50;

if (values.gc) {
  const self = fileURLToPath(import.meta.url);
  const args = [root, '--sessions', values.sessions, '--turns', values.turns];
  const run = spawnSync(process.execPath, ['--trace-gc-nvp', self, ...args], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.status !== 0) {
    throw new Error(
      `session-path: ${run.error?.message ?? run.signal ?? run.status} ${run.stderr}`,
    );
  }
  const lines = run.stdout.split('\n');
  const result = JSON.parse(lines.filter((line) => line.startsWith('{')).at(-1));
  const collections = lines.filter((line) => / gc=/.test(line));
  const field = (line, name) => Number(new RegExp(`\\b${name}=([0-9.]+)`).exec(line)?.[1] ?? 0);
  const sum = (name) => collections.reduce((total, line) => total + field(line, name), 0);
  const scavenges = collections.filter((line) => / gc=s /.test(line)).length;
  const all = warmup + measured;
  Object.assign(result, {
    allocatedKbPerTurn: +(sum('allocated') / 1024 / all).toFixed(1),
    promotedKbPerTurn: +(sum('promoted') / 1024 / all).toFixed(1),
    scavenges,
    otherCollections: collections.length - scavenges,
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plauder-session-path-'));
const env = {
  ...process.env,
  PLAUDER_DATABASE_URL: `sqlite:${path.join(dir, 'plauder.db')}`,
  PLAUDER_SECRET: Buffer.alloc(32, 7).toString('base64'),
  PLAUDER_PLANS: 'standard=1000,plus=5000,bench=1000000000',
  PLAUDER_LOG_LEVEL: 'silent',
};
try {
  const seed = JSON.parse(
    execFileSync(
      process.execPath,
      [path.join(root, 'bench/tools/seed-database.mjs'), '--sessions', String(sessionCount)],
      { env, cwd: root, encoding: 'utf8' },
    ),
  );
  const { loadConfig } = await import(`${root}/dist/config/config.js`);
  const { createServices } = await import(`${root}/dist/services.js`);
  const { createStore } = await import(`${root}/dist/storage/create-database.js`);
  const { loadSecret } = await import(`${root}/dist/storage/secret.js`);
  const config = loadConfig(env);
  const store = await createStore(config.database);
  const services = createServices(config, store, loadSecret(config.secret), Date.now);
  const turn = (i) => ({
    message: seed.message,
    reply: `Nachricht ${i} erhalten.`,
    language: 'de',
  });
  const run = async (count, offset) => {
    let next = 0;
    const inFlight = async () => {
      while (next < count) {
        const i = next++;
        const id = `${seed.sessionPrefix}${(offset + i) % sessionCount}`;
        const session = await services.sessions.open(seed.keyId, id, Date.now());
        await session.record(turn(i), Date.now());
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT }, inFlight));
  };
  await run(warmup, 0);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await run(measured, warmup);
  const cpu = process.cpuUsage(cpu0);
  const ms = performance.now() - t0;
  await store.close();
  const result = {
    checkout: root,
    sessions: sessionCount,
    turns: measured,
    cpuUsPerTurn: +((cpu.user + cpu.system) / measured).toFixed(1),
    wallUsPerTurn: +((ms * 1000) / measured).toFixed(1),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
