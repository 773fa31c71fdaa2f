#!/usr/bin/env node
/**
 * CPU per chat request of the whole app in process: Fastify, hooks, the turn use case,
 * SQLite, the placeholder core (or the built-in one, or the `openai` core in front of
 * servers/upstream.mjs in a child process, whose CPU is not counted), through `app.inject`
 * (no sockets, no load generator, so far less noise than the HTTP bench on a shared
 * machine). 50 requests in flight, after 3 000 warm-up requests (30 turns on each of 100
 * sessions).
 *
 *   node bench/tools/pipeline.mjs <checkout> <session|plain> [requests] [placeholder|builtin|openai]
 *
 * `PLAUDER_SESSION_WINDOW` in the environment sets the memory window (default 20; 0: no turn
 * is stored).
 *
 * `<checkout>` is a built tree (its dist/): this one, or an earlier commit checked out with
 * `git worktree add` (and node_modules linked), to compare two builds run after one another,
 * alternating, several times.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { installCleanup } from '../lib/children.mjs';
import { startUpstream } from '../lib/scenarios.mjs';

const [rootArg = '.', kind = 'session', n = '20000', coreKind = 'placeholder'] =
  process.argv.slice(2);
const root = (await import('node:path')).resolve(rootArg);
const total = Number(n);
const { buildApp } = await import(`${root}/dist/app.js`);
const { loadConfig } = await import(`${root}/dist/config/config.js`);
const { createServices } = await import(`${root}/dist/services.js`);
const { createStore } = await import(`${root}/dist/storage/create-database.js`);
const { loadSecret } = await import(`${root}/dist/storage/secret.js`);
const { createCore } = await import(`${root}/dist/core/create-core.js`);
// The openai core's model server: servers/upstream.mjs, stopped however this process ends.
installCleanup();
const upstream =
  coreKind === 'openai'
    ? await startUpstream({ root: fileURLToPath(new URL('../..', import.meta.url)), own: () => {} })
    : undefined;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inj-'));
const env = {
  PLAUDER_DATABASE_URL: `sqlite:${dir}/p.db`,
  PLAUDER_SECRET: Buffer.alloc(32, 7).toString('base64'),
  PLAUDER_PLANS: 'standard=1000,plus=5000,bench=1000000000',
  PLAUDER_LOG_LEVEL: 'info',
  PLAUDER_CORE: coreKind,
};
// The memory window (default 20), to see what storing a turn costs: 0 stores none.
if (process.env.PLAUDER_SESSION_WINDOW)
  env.PLAUDER_SESSION_WINDOW = process.env.PLAUDER_SESSION_WINDOW;
if (upstream) {
  env.PLAUDER_OPENAI_BASE_URL = `${upstream.url}/v1`;
  env.PLAUDER_OPENAI_MODEL = 'bench';
}
const config = loadConfig(env);
const store = await createStore(config.database);
const services = createServices(config, store, loadSecret(config.secret), Date.now);
const core = await createCore(config.core);
const devnull = fs.createWriteStream('/dev/null');
const app = await buildApp(config, { services, core }, { logStream: devnull });
await app.ready();
const issued = await services.keys.create({ name: 'b', plan: 'bench' });
const key = (issued.value ?? issued).key;
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
let i = 0;
const one = async () => {
  const k = i++;
  const body =
    kind === 'session'
      ? { message: 'Wie viele Anfragen habe ich?', sessionId: `s${k % 100}` }
      : { message: 'Wie viele Anfragen habe ich?' };
  const res = await app.inject({
    method: 'POST',
    url: '/api/chat',
    headers,
    payload: JSON.stringify(body),
  });
  if (res.statusCode !== 200) throw new Error(res.body);
};
const run = async (count) => {
  i = 0;
  let left = count;
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (left-- > 0) await one();
    }),
  );
};
await run(3000); // warm-up, and 30 turns per session
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await run(total);
const cpu = process.cpuUsage(cpu0);
const ms = performance.now() - t0;
console.log(
  JSON.stringify({
    root,
    kind,
    core: coreKind,
    cpuUsPerReq: +((cpu.user + cpu.system) / total).toFixed(1),
    wallUsPerReq: +((ms * 1000) / total).toFixed(1),
  }),
);
await app.close();
await store.close();
await core.close?.();
await upstream?.stop();
fs.rmSync(dir, { recursive: true, force: true });
