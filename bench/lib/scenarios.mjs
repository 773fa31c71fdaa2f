/**
 * The scenarios, in the order they run. Each starts its own server process(es), checks
 * that the server answers what it should, and hands the runner a target to load. The
 * first server returned is the one measured (RSS, CPU); others (the upstream) serve it.
 * Every server started is handed to `ctx.own` and every temp dir to `ctx.defer`, so the
 * runner stops and removes them whether the scenario succeeds or fails half-way.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { UPSTREAM_REPLY } from '../servers/upstream.mjs';
import { freePort, makeTempDir, removeTempDir, runNode, startServer } from './children.mjs';
import { MESSAGE } from './conversation.mjs';
import { request } from './load.mjs';

const PLANS =
  'standard=1000,plus=5000,bench=1000000000,bench-minute=1000000000/month+1000000000/minute';
const JSON_HEADERS = { 'content-type': 'application/json' };
export const PORTKEY_VERSION = '1.15.2';

/** Options of the measurements a scenario gets: closed loop, open loop rates, concurrency 1. */
const LIMIT = { closed: true, open: true, sequential: false };
const PROXY = { closed: true, open: true, sequential: true };

export const SCENARIOS = [
  {
    id: 'http',
    group: 'limit',
    label: 'bare node:http, constant reply',
    measure: LIMIT,
    start: (ctx) => startBare(ctx, 'bare-http.mjs'),
  },
  {
    id: 'fastify',
    group: 'limit',
    label: 'bare Fastify, constant reply',
    measure: LIMIT,
    start: (ctx) => startBare(ctx, 'bare-fastify.mjs'),
  },
  {
    id: 'plauder',
    group: 'plauder',
    label: 'plauder /api/chat, no sessionId',
    measure: LIMIT,
    profiled: true,
    start: (ctx) => startPlauderScenario(ctx, { keys: 1, sessions: 0 }),
  },
  {
    id: 'plauder-minute',
    group: 'plauder',
    label: 'plauder /api/chat, no sessionId, plan with a per-minute limit',
    measure: LIMIT,
    start: (ctx) => startPlauderScenario(ctx, { keys: 1, sessions: 0, plan: 'bench-minute' }),
  },
  {
    id: 'plauder-session',
    group: 'plauder',
    label: 'plauder /api/chat + sessionId (20-turn window)',
    stored: '1 key, 100 sessions',
    measure: LIMIT,
    profiled: true,
    start: (ctx) => startPlauderScenario(ctx, { keys: 1, sessions: 100 }),
  },
  {
    id: 'plauder-one-session',
    group: 'plauder',
    label: 'plauder /api/chat, every connection on one sessionId (concurrent turns of one session)',
    stored: '1 key, 1 session',
    measure: { closed: true, open: false, sequential: false },
    start: (ctx) => startPlauderScenario(ctx, { keys: 1, sessions: 1 }),
  },
  {
    id: 'plauder-session-small-heap',
    group: 'plauder',
    label:
      'plauder + sessionId, the memory-saving Node options of docs/configuration.md (not the shipped defaults)',
    measure: { closed: true, open: false, sequential: false },
    start: (ctx) => startPlauderScenario(ctx, { keys: 1, sessions: 100, smallHeap: true }),
  },
  {
    id: 'pg-session',
    group: 'postgres',
    label: 'plauder /api/chat + sessionId on PostgreSQL, 1 instance',
    measure: { closed: true, open: false, sequential: false },
    start: (ctx) => startPlauderPostgres(ctx, { instances: 1 }),
  },
  {
    id: 'pg-session-2',
    group: 'postgres',
    label: 'plauder /api/chat + sessionId on PostgreSQL, 2 instances',
    measure: { closed: true, open: false, sequential: false },
    start: (ctx) => startPlauderPostgres(ctx, { instances: 2 }),
  },
  {
    id: 'upstream',
    group: 'proxy',
    label: 'upstream direct (node:http, constant completion)',
    measure: PROXY,
    start: startUpstreamDirect,
  },
  {
    id: 'proxy-floor',
    group: 'proxy',
    label: 'bare Fastify + undici → upstream (no auth, quota, logs)',
    measure: PROXY,
    start: startBareProxy,
  },
  {
    id: 'plauder-openai',
    group: 'proxy',
    label: 'plauder /api/chat, openai core → upstream',
    measure: PROXY,
    profiled: true,
    start: (ctx) => startPlauderOpenAi(ctx),
  },
  {
    id: 'plauder-openai-small-heap',
    group: 'proxy',
    label:
      'plauder /api/chat, openai core → upstream, the memory-saving Node options of docs/configuration.md',
    measure: { closed: true, open: false, sequential: false },
    start: (ctx) => startPlauderOpenAi(ctx, { smallHeap: true }),
  },
  {
    id: 'portkey',
    group: 'proxy',
    label: `Portkey gateway ${PORTKEY_VERSION} → upstream`,
    measure: PROXY,
    start: startPortkey,
  },
  {
    id: 'keys-1k',
    group: 'scaling',
    label: 'plauder + sessionId, 1 000 keys stored',
    stored: '1 000 keys, 100 sessions',
    measure: LIMIT,
    start: (ctx) => startPlauderScenario(ctx, { keys: 1000, sessions: 100 }),
  },
  {
    id: 'keys-100k',
    group: 'scaling',
    label: 'plauder + sessionId, 100 000 keys stored',
    stored: '100 000 keys, 100 sessions',
    measure: LIMIT,
    start: (ctx) => startPlauderScenario(ctx, { keys: 100_000, sessions: 100 }),
  },
  {
    id: 'usage-year',
    group: 'scaling',
    label: 'plauder + sessionId, 1 000 keys with a year of usage stored',
    stored: '1 000 keys × 12 months and 365 days of usage, 100 sessions',
    measure: LIMIT,
    start: (ctx) => startPlauderScenario(ctx, { keys: 1000, sessions: 100, usageMonths: 12 }),
  },
  {
    id: 'sessions-10k-stored',
    group: 'scaling',
    label: 'plauder + sessionId, 10 000 sessions × 20 turns stored, turns on 100 of them',
    stored: '1 key, 10 000 sessions (turns on 100)',
    measure: LIMIT,
    start: (ctx) => startPlauderScenario(ctx, { keys: 1, sessions: 10_000, inUse: 100 }),
  },
  {
    id: 'sessions-10k',
    group: 'scaling',
    label: 'plauder + sessionId, 10 000 sessions × 20 turns stored, every request to the next',
    stored: '1 key, 10 000 sessions (turns on all, in turn)',
    measure: LIMIT,
    start: (ctx) => startPlauderScenario(ctx, { keys: 1, sessions: 10_000 }),
  },
];

/** Environment for children without the caller's own plauder settings. */
export function cleanEnv(extra) {
  const env = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('PLAUDER_') && name !== 'PORT' && name !== 'HOST') env[name] = value;
  }
  return { ...env, ...extra };
}

function constantTarget(url, path, headers, body) {
  return { url, path, headers: { ...JSON_HEADERS, ...headers }, bodyFor: () => body };
}

async function startBare(ctx, script) {
  const port = await freePort();
  const server = await startServer({
    name: script,
    script: path.join(ctx.root, 'bench/servers', script),
    env: cleanEnv({ PORT: String(port) }),
    port,
    own: ctx.own,
  });
  const body = JSON.stringify({ message: MESSAGE, sessionId: 'bench-0' });
  const target = constantTarget(server.url, '/api/chat', {}, body);
  const check = await request(`${server.url}/api/chat`, {
    method: 'POST',
    headers: target.headers,
    body,
  });
  expect(check.status === 200 && typeof check.json?.reply === 'string', 'constant reply', check);
  return { servers: [server], target };
}

export async function startPlauder(
  ctx,
  {
    keys,
    sessions,
    core = ctx.opts.core,
    env = {},
    nodeArgs = plauderNodeArgs(ctx),
    plan,
    stdoutFile,
    usageMonths = 0,
  },
) {
  const dir = makeTempDir('plauder-bench-');
  ctx.defer(() => removeTempDir(dir));
  const baseEnv = cleanEnv({
    PLAUDER_DATABASE_URL: `sqlite:${path.join(dir, 'plauder.db')}`,
    PLAUDER_SECRET: ctx.secret,
    PLAUDER_PLANS: PLANS,
    PLAUDER_CORE: core,
    PLAUDER_LOG_LEVEL: ctx.opts.logLevel,
    ...env,
  });
  const seeded = await runNode(
    path.join(ctx.root, 'bench/tools/seed-database.mjs'),
    [
      '--keys',
      String(keys),
      '--sessions',
      String(sessions),
      '--turns',
      String(ctx.window),
      ...(plan ? ['--plan', plan] : []),
      ...(usageMonths > 0 ? ['--usage-months', String(usageMonths)] : []),
    ],
    baseEnv,
  );
  const seed = JSON.parse(seeded);
  const usage = usageMonths > 0 ? `, ${usageMonths} months of usage each` : '';
  ctx.log(`  seeded ${keys} key(s)${usage}, ${sessions} session(s) in ${seed.ms} ms`);
  const port = await freePort();
  const server = await startServer({
    name: 'plauder',
    script: path.join(ctx.root, 'dist/cli/main.js'),
    args: ['serve'],
    nodeArgs,
    env: { ...baseEnv, HOST: '127.0.0.1', PORT: String(port) },
    port,
    readyPath: '/healthz',
    own: ctx.own,
    stdoutFile,
  });
  const headers = { ...JSON_HEADERS, authorization: `Bearer ${seed.key}` };
  return { server, seed, headers, env: baseEnv };
}

/**
 * plauder on a PostgreSQL database of its own (created on the server at
 * PLAUDER_BENCH_POSTGRES_URL, dropped afterwards), with the same data as
 * `plauder-session`; with several instances the load is spread across them.
 */
async function startPlauderPostgres(ctx, { instances }) {
  const admin =
    process.env.PLAUDER_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `plauder_bench_${process.pid}_${Date.now().toString(36)}`;
  const psql = (sql) => {
    const result = spawnSync('psql', [admin, '-qAtc', sql], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`psql: ${result.stderr || result.error?.message}`);
  };
  psql(`create database "${name}"`);
  ctx.defer(() => psql(`drop database if exists "${name}" with (force)`));
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const sessions = 100;
  const { server, seed, headers, env } = await startPlauder(ctx, {
    keys: 1,
    sessions,
    env: { PLAUDER_DATABASE_URL: url.href },
  });
  const servers = [server];
  for (let n = 1; n < instances; n++) {
    const port = await freePort();
    servers.push(
      await startServer({
        name: `plauder-${n + 1}`,
        script: path.join(ctx.root, 'dist/cli/main.js'),
        args: ['serve'],
        nodeArgs: plauderNodeArgs(ctx),
        env: { ...env, HOST: '127.0.0.1', PORT: String(port) },
        port,
        readyPath: '/healthz',
        own: ctx.own,
      }),
    );
  }
  const bodies = Array.from({ length: sessions }, (_, i) =>
    JSON.stringify({ message: seed.message, sessionId: `${seed.sessionPrefix}${i}` }),
  );
  for (const instance of servers) {
    const read = await request(`${instance.url}/api/sessions/${seed.sessionPrefix}0`, { headers });
    expect(
      read.status === 200 && read.json?.turns?.length === ctx.window,
      'the seeded session',
      read,
    );
  }
  const target = {
    url: server.url,
    urls: servers.map((s) => s.url),
    path: '/api/chat',
    headers,
    bodyFor: (i) => bodies[i % bodies.length],
  };
  return { servers, target };
}

/**
 * The context of a standalone bench script (not run.mjs): what startPlauder and
 * startUpstream need, the servers it started (`servers`, to stop) and the clean-ups it
 * deferred (`deferred`, to run afterwards). `nodeArgs`, from a script's `--node-args "A B"`
 * option, replaces the shipped Node options of plauder servers (`--node-args=`: Node's
 * defaults), as in run.mjs.
 */
export function scriptContext(root, { core, nodeArgs, log = () => {} }) {
  const servers = [];
  const deferred = [];
  const ctx = {
    root,
    window: 20,
    secret: randomBytes(32).toString('base64'),
    opts: { core, logLevel: 'info', nodeArgs: nodeArgs?.split(/\s+/).filter(Boolean) },
    own: (server) => servers.push(server),
    defer: (step) => deferred.push(step),
    log,
  };
  return { ctx, servers, deferred };
}

/**
 * The Node options plauder ships with: those of the `plauder` command's shebang (none
 * since the shebang became `#!/usr/bin/env node`; an earlier build run as a baseline may
 * have `#!/usr/bin/env -S node --max-semi-space-size=4 ...`), which `npm start`
 * passes too. Every plauder server of the bench starts with them unless a scenario says
 * otherwise.
 */
function shippedNodeArgs(root) {
  const first = fs.readFileSync(path.join(root, 'dist/cli/main.js'), 'utf8').split('\n', 1)[0];
  const words = first.replace(/^#!\s*/, '').split(/\s+/);
  return words.slice(words.indexOf('node') + 1);
}

/** The memory-saving Node options docs/configuration.md offers for small hosts (`*-small-heap` rows). */
const SMALL_HEAP = ['--max-semi-space-size=4', '--heap-growing-percent=20'];

/** The shipped options, or those of `--node-args` when the run asks for others. */
function plauderNodeArgs(ctx) {
  return ctx.opts.nodeArgs ?? shippedNodeArgs(ctx.root);
}

/** Node options that profile the server of a `profiled` scenario when --cpu-prof is on. */
function profileArgs(ctx) {
  if (!ctx.profileFile) return [];
  return [
    '--cpu-prof',
    `--cpu-prof-dir=${path.dirname(ctx.profileFile)}`,
    `--cpu-prof-name=${path.basename(ctx.profileFile)}`,
  ];
}

/** `inUse`: the load's turns go to the first `inUse` of the seeded sessions (default: all). */
async function startPlauderScenario(
  ctx,
  { keys, sessions, inUse = sessions, smallHeap = false, plan, usageMonths },
) {
  const nodeArgs = [...profileArgs(ctx), ...(smallHeap ? SMALL_HEAP : plauderNodeArgs(ctx))];
  const { server, seed, headers } = await startPlauder(ctx, {
    keys,
    sessions,
    nodeArgs,
    plan,
    usageMonths,
  });
  const bodies =
    sessions === 0
      ? [JSON.stringify({ message: seed.message })]
      : Array.from({ length: inUse }, (_, i) =>
          JSON.stringify({ message: seed.message, sessionId: `${seed.sessionPrefix}${i}` }),
        );
  const target = {
    url: server.url,
    path: '/api/chat',
    headers,
    bodyFor: (i) => bodies[i % bodies.length],
  };
  if (sessions > 0) {
    // The seeded window must be readable by the server: same secret, real sealed turns.
    for (const i of [0, sessions - 1]) {
      const read = await request(`${server.url}/api/sessions/${seed.sessionPrefix}${i}`, {
        headers,
      });
      expect(
        read.status === 200 && read.json?.turns?.length === ctx.window,
        `session ${seed.sessionPrefix}${i} with ${ctx.window} turns`,
        read,
      );
    }
  }
  const check = await request(`${server.url}/api/chat`, {
    method: 'POST',
    headers,
    body: bodies[0],
  });
  expect(
    check.status === 200 && typeof check.json?.reply === 'string' && !check.json.error,
    'a reply',
    check,
  );
  if (plan === 'bench-minute') {
    const policy = check.headers?.['ratelimit-policy'] ?? '';
    expect(policy.includes('"minute";q=1000000000;w=60'), 'the per-minute policy', check);
  }
  return { servers: [server], target };
}

const OPENAI_BODY = JSON.stringify({
  model: 'bench',
  messages: [{ role: 'user', content: MESSAGE }],
});

/** The settings of a plauder server whose `openai` core asks the bench upstream `upstream`. */
export function openAiCoreEnv(upstream) {
  return {
    PLAUDER_OPENAI_BASE_URL: `${upstream.url}/v1`,
    PLAUDER_OPENAI_MODEL: 'bench',
    PLAUDER_OPENAI_API_KEY: 'sk-bench',
  };
}

export async function startUpstream(ctx) {
  const port = await freePort();
  return startServer({
    name: 'upstream',
    script: path.join(ctx.root, 'bench/servers/upstream.mjs'),
    env: cleanEnv({ PORT: String(port) }),
    port,
    own: ctx.own,
  });
}

async function startUpstreamDirect(ctx) {
  const upstream = await startUpstream(ctx);
  const target = constantTarget(upstream.url, '/v1/chat/completions', {}, OPENAI_BODY);
  const check = await request(`${upstream.url}${target.path}`, {
    method: 'POST',
    headers: target.headers,
    body: OPENAI_BODY,
  });
  expect(
    check.json?.choices?.[0]?.message?.content === UPSTREAM_REPLY,
    'the upstream completion',
    check,
  );
  return { servers: [upstream], target };
}

async function startBareProxy(ctx) {
  const upstream = await startUpstream(ctx);
  const port = await freePort();
  const proxy = await startServer({
    name: 'bare-proxy',
    script: path.join(ctx.root, 'bench/servers/bare-proxy.mjs'),
    env: cleanEnv({ PORT: String(port), UPSTREAM: `${upstream.url}/v1` }),
    port,
    own: ctx.own,
  });
  const body = JSON.stringify({ message: MESSAGE });
  const target = constantTarget(proxy.url, '/api/chat', {}, body);
  const check = await request(`${proxy.url}/api/chat`, {
    method: 'POST',
    headers: target.headers,
    body,
  });
  expect(check.json?.reply === UPSTREAM_REPLY, "the upstream's reply", check);
  return { servers: [proxy, upstream], target };
}

async function startPlauderOpenAi(ctx, { smallHeap = false } = {}) {
  const upstream = await startUpstream(ctx);
  const { server, headers } = await startPlauder(ctx, {
    keys: 1,
    sessions: 0,
    core: 'openai',
    nodeArgs: [...profileArgs(ctx), ...(smallHeap ? SMALL_HEAP : plauderNodeArgs(ctx))],
    env: openAiCoreEnv(upstream),
  });
  const body = JSON.stringify({ message: MESSAGE });
  const target = { url: server.url, path: '/api/chat', headers, bodyFor: () => body };
  const check = await request(`${server.url}/api/chat`, { method: 'POST', headers, body });
  expect(
    check.status === 200 && check.json?.reply === UPSTREAM_REPLY,
    "the upstream's reply",
    check,
  );
  return { servers: [server, upstream], target };
}

async function startPortkey(ctx) {
  const script = ensurePortkey(ctx);
  const upstream = await startUpstream(ctx);
  const port = await freePort();
  const gateway = await startServer({
    name: 'portkey',
    script,
    args: [`--port=${port}`, '--headless'],
    env: cleanEnv({ NODE_ENV: 'production' }),
    port,
    own: ctx.own,
  });
  const target = constantTarget(
    gateway.url,
    '/v1/chat/completions',
    {
      authorization: 'Bearer sk-bench',
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `${upstream.url}/v1`,
    },
    OPENAI_BODY,
  );
  // It must really forward to our upstream, not answer from elsewhere.
  const check = await request(`${gateway.url}${target.path}`, {
    method: 'POST',
    headers: target.headers,
    body: OPENAI_BODY,
  });
  expect(
    check.status === 200 && check.json?.choices?.[0]?.message?.content === UPSTREAM_REPLY,
    "the upstream's completion through the gateway",
    check,
  );
  return { servers: [gateway, upstream], target };
}

/** Installs bench/peers (its own package.json and lock) on first use; returns the gateway's entry. */
export function ensurePortkey(ctx) {
  const peers = path.join(ctx.root, 'bench/peers');
  const pkgDir = path.join(peers, 'node_modules/@portkey-ai/gateway');
  const pkgFile = path.join(pkgDir, 'package.json');
  // bench/peers pins @hono/node-server (its package.json, "overrides"): 1.19's Response
  // keeps the upstream fetch Response's immutable headers, and Portkey's streamed answers
  // then fail with `TypeError: immutable` on every Node (18, 20, 22, 24 tried).
  const pinned = JSON.parse(fs.readFileSync(path.join(peers, 'package.json'), 'utf8')).overrides;
  const versionOf = (dir) => {
    const file = path.join(dir, 'package.json');
    return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')).version : undefined;
  };
  const installed = () =>
    versionOf(pkgDir) === PORTKEY_VERSION &&
    Object.entries(pinned ?? {}).every(
      ([name, version]) => versionOf(path.join(peers, 'node_modules', name)) === version,
    );
  if (!installed()) {
    ctx.log(`  installing @portkey-ai/gateway@${PORTKEY_VERSION} into bench/peers (first use)`);
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const result = spawnSync(npm, ['install', '--prefix', peers, '--no-audit', '--no-fund'], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (result.status !== 0 || !installed()) throw new Error('npm install in bench/peers failed');
  }
  const { bin } = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
  const entry = typeof bin === 'string' ? bin : Object.values(bin ?? {})[0];
  if (!entry) throw new Error('@portkey-ai/gateway: no bin entry in its package.json');
  return path.join(pkgDir, entry);
}

function expect(condition, what, response) {
  if (!condition) {
    throw new Error(`expected ${what}, got ${response.status}: ${response.text.slice(0, 300)}`);
  }
}
