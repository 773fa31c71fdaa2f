// plauder's /api/chat (with a session at the full memory window) beside a bare Fastify
// server returning a constant reply, one after the other in one run: the ratio is what counts.
// Usage: npm run bench:api   (env: DURATION=10 CONNECTIONS=50 CORE=builtin)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, 'dist/cli/main.js');
const duration = Number(process.env.DURATION ?? 10);
const connections = Number(process.env.CONNECTIONS ?? 50);
const core = process.env.CORE ?? 'builtin';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plauder-bench-'));
const env = {
  ...process.env,
  PLAUDER_DATABASE_URL: `sqlite:${path.join(dir, 'plauder.db')}`,
  PLAUDER_PLANS: 'standard=1000,plus=5000,bench=1000000000',
  PLAUDER_CORE: core,
  PLAUDER_LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  PORT: '0',
};

function start(args, extraEnv = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: { ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const port = /listening (\d+)|Server listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (port) resolve({ child, url: `http://127.0.0.1:${port[1] ?? port[2]}` });
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

function load(url, body, headers) {
  return autocannon({
    url,
    method: 'POST',
    connections,
    duration,
    body: JSON.stringify(body),
    headers,
  });
}

async function stop({ child }) {
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}

const created = spawnSync(
  process.execPath,
  [cli, 'keys', 'create', '--name', 'bench', '--plan', 'bench', '--json'],
  { env },
);
const { key } = JSON.parse(created.stdout.toString());
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const message = { message: 'Wie viele Anfragen habe ich im Monat?', sessionId: 'bench-session' };

const results = [];
const bare = await start([path.join(root, 'bench/api/bare-fastify.mjs')]);
await load(`${bare.url}/api/chat`, message, headers); // warm-up
results.push({
  name: 'bare Fastify, constant reply',
  r: await load(`${bare.url}/api/chat`, message, headers),
});
await stop(bare);

// Plauder's server logs at info level; "warn" keeps it quiet but needs the port from Fastify's line.
const plauder = await start([cli, 'serve'], { PLAUDER_LOG_LEVEL: 'info' });
for (let i = 0; i < 25; i++) {
  await fetch(`${plauder.url}/api/chat`, {
    method: 'POST',
    headers,
    body: JSON.stringify(message),
  });
}
await load(`${plauder.url}/api/chat`, message, headers); // warm-up, fills the session window
results.push({
  name: `plauder /api/chat + sessionId (${core} core)`,
  r: await load(`${plauder.url}/api/chat`, message, headers),
});
results.push({
  name: `plauder /api/chat, no sessionId (${core} core)`,
  r: await load(`${plauder.url}/api/chat`, { message: message.message }, headers),
});
await stop(plauder);

const base = results[0].r.requests.average;
console.log(
  `\nautocannon -c ${connections} -d ${duration}, ${os.cpus().length} CPUs, node ${process.version}\n`,
);
console.log('| server | req/s (mean) | p50 ms | p99 ms | non-2xx | ratio to bare Fastify |');
console.log('|---|---|---|---|---|---|');
for (const { name, r } of results) {
  const ratio = (r.requests.average / base).toFixed(2);
  console.log(
    `| ${name} | ${r.requests.average.toFixed(0)} | ${r.latency.p50} | ${r.latency.p99} | ${r.non2xx} | ${ratio} |`,
  );
}
console.log(
  JSON.stringify({
    results: results.map(({ name, r }) => ({
      name,
      rps: r.requests.average,
      p99: r.latency.p99,
      non2xx: r.non2xx,
    })),
  }),
);
fs.rmSync(dir, { recursive: true, force: true });
