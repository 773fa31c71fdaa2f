/**
 * Streamed replies, side by side in one run (bench/README.md, "Streaming"):
 *
 * - time to first token (TTFT): from sending the request to the arrival of the first
 *   piece of the reply's text, at concurrency 1 and 50, for the streaming upstream hit
 *   directly and through plauder (`/api/chat` as SSE, `/v1/chat/completions` with
 *   `"stream": true`) and Portkey; "added" is a percentile through the proxy minus the
 *   same percentile of the upstream hit directly;
 * - streamed requests/s at concurrency 50 (complete streams, every one checked for the
 *   whole reply).
 *
 * Per target: `--warmup` s at c50; c1 measured right after it; `--settle` s more at c1; c1
 * measured again (the c1 figures); c50 measured.
 *
 * Each target starts its own upstream (bench/servers/upstream.mjs, streaming) and proxy.
 *   npm run build && node bench/stream/stream-bench.mjs [--duration S] [--warmup S]
 *     [--settle S] [--only a,b]
 * Writes bench/results/stream-latest.{md,json}.
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSecondsOf, freePort, installCleanup, startServer } from '../lib/children.mjs';
import { MESSAGE } from '../lib/conversation.mjs';
import { percentile } from '../lib/load.mjs';
import {
  cleanEnv,
  ensurePortkey,
  openAiCoreEnv,
  PORTKEY_VERSION,
  scriptContext,
  startPlauder,
  startUpstream,
} from '../lib/scenarios.mjs';
import { STREAM_PIECES } from '../servers/upstream.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    settle: { type: 'string', default: '6' },
    only: { type: 'string' },
    'node-args': { type: 'string' },
    out: { type: 'string', default: path.join(root, 'bench/results') },
  },
});
const durationS = Number(args.duration);
const warmupS = Number(args.warmup);
const settleS = Number(args.settle);
const FIRST = STREAM_PIECES[0]?.trim() ?? 'Hallo';
const LAST = STREAM_PIECES.at(-1) ?? '';

installCleanup();
const { ctx, servers, deferred } = scriptContext(root, {
  core: 'openai',
  nodeArgs: args['node-args'],
  log: (line) => process.stderr.write(`${line}\n`),
});

const STREAM_BODY = JSON.stringify({
  model: 'bench',
  stream: true,
  messages: [{ role: 'user', content: MESSAGE }],
});

const TARGETS = [
  {
    id: 'upstream',
    label: 'streaming upstream, hit directly',
    async start() {
      const upstream = await startUpstream(ctx);
      return {
        url: upstream.url,
        path: '/v1/chat/completions',
        headers: {},
        body: STREAM_BODY,
        pids: [upstream.pid],
      };
    },
  },
  {
    id: 'stream-floor',
    label: 'bare Fastify + undici passing the upstream stream through (no auth, quota, parsing)',
    async start() {
      const upstream = await startUpstream(ctx);
      const port = await freePort();
      const proxy = await startServer({
        name: 'bare-stream-proxy',
        script: path.join(root, 'bench/servers/bare-stream-proxy.mjs'),
        env: cleanEnv({ PORT: String(port), UPSTREAM: `${upstream.url}/v1` }),
        port,
        own: ctx.own,
      });
      return {
        pids: [proxy.pid, upstream.pid],
        url: proxy.url,
        path: '/api/chat',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: MESSAGE }),
      };
    },
  },
  {
    id: 'plauder-json',
    label: 'plauder /api/chat unstreamed (openai core), for reference: TTFT = whole reply',
    async start() {
      const { server, headers, pids } = await startPlauderOnUpstream();
      // The upstream still streams: the core's plain request carries no "stream":true.
      return {
        pids,
        url: server.url,
        path: '/api/chat',
        headers,
        body: JSON.stringify({ message: MESSAGE }),
      };
    },
  },
  {
    id: 'plauder-sse',
    label: 'plauder /api/chat, Accept: text/event-stream (openai core)',
    async start() {
      const { server, headers, pids } = await startPlauderOnUpstream();
      return {
        pids,
        url: server.url,
        path: '/api/chat',
        headers: { ...headers, accept: 'text/event-stream' },
        body: JSON.stringify({ message: MESSAGE }),
      };
    },
  },
  {
    id: 'plauder-v1',
    label: 'plauder /v1/chat/completions, "stream": true (openai core)',
    async start() {
      const { server, headers, pids } = await startPlauderOnUpstream();
      return {
        pids,
        url: server.url,
        path: '/v1/chat/completions',
        headers,
        body: JSON.stringify({
          model: 'plauder-de',
          stream: true,
          messages: [{ role: 'user', content: MESSAGE }],
        }),
      };
    },
  },
  {
    id: 'portkey',
    label: `Portkey gateway ${PORTKEY_VERSION}, "stream": true`,
    async start() {
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
      return {
        pids: [gateway.pid, upstream.pid],
        url: gateway.url,
        path: '/v1/chat/completions',
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer sk-bench',
          'x-portkey-provider': 'openai',
          'x-portkey-custom-host': `${upstream.url}/v1`,
        },
        body: STREAM_BODY,
      };
    },
  },
];

async function startPlauderOnUpstream() {
  const upstream = await startUpstream(ctx);
  const plauder = await startPlauder(ctx, {
    keys: 1,
    sessions: 0,
    core: 'openai',
    env: openAiCoreEnv(upstream),
  });
  return { ...plauder, pids: [plauder.server.pid, upstream.pid] };
}

/** CPU seconds the whole machine spent (all but idle and iowait), from /proc/stat. */
function machineBusySeconds() {
  const [cpu] = fs.readFileSync('/proc/stat', 'utf8').split('\n');
  const f = (cpu ?? '').trim().split(/\s+/).slice(1).map(Number);
  const busy = f.slice(0, 8).reduce((a, b) => a + b, 0) - (f[3] ?? 0) - (f[4] ?? 0);
  return busy / 100;
}

/** One streamed request: the TTFT and whether the whole reply arrived with a 200. */
function streamOnce(agent, target) {
  return new Promise((resolve) => {
    const started = performance.now();
    let ttft;
    let text = '';
    const req = http.request(
      `${target.url}${target.path}`,
      {
        method: 'POST',
        agent,
        headers: { ...target.headers, 'content-length': Buffer.byteLength(target.body) },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
          if (ttft === undefined && text.includes(FIRST)) ttft = performance.now() - started;
        });
        res.on('end', () => resolve({ ok: res.statusCode === 200 && text.includes(LAST), ttft }));
      },
    );
    req.on('error', () => resolve({ ok: false, ttft }));
    req.end(target.body);
  });
}

async function load(target, concurrency, seconds) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const ttfts = [];
  let completed = 0;
  let failed = 0;
  const deadline = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const result = await streamOnce(agent, target);
      if (result.ok && result.ttft !== undefined) {
        completed++;
        ttfts.push(result.ttft);
      } else failed++;
    }
  };
  const [proxyPid, ...otherPids] = target.pids;
  const cpu0 = [cpuSecondsOf(proxyPid), ...otherPids.map(cpuSecondsOf)];
  const own0 = process.cpuUsage();
  const busy0 = machineBusySeconds();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsedS = (performance.now() - started) / 1000;
  const spent = [cpuSecondsOf(proxyPid), ...otherPids.map(cpuSecondsOf)].map((x, i) => x - cpu0[i]);
  const own = process.cpuUsage(own0);
  const ownS = (own.user + own.system) / 1e6;
  const ours = spent.reduce((a, b) => a + b, 0) + ownS;
  agent.destroy();
  const sorted = Float64Array.from(ttfts).sort();
  return {
    concurrency,
    completed,
    failed,
    rps: completed / elapsedS,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    // The proxy's own CPU (the first pid: plauder, Portkey or the upstream) per stream: less
    // sensitive to other work on the machine than streams/s.
    proxyCpuUsPerStream: ((spent[0] ?? Number.NaN) / completed) * 1e6,
    // What the rest of the machine spent meanwhile (1 = one core): other people's work.
    otherCores: (machineBusySeconds() - busy0 - ours) / elapsedS,
  };
}

const results = {};
const loadBefore = os.loadavg();
for (const target of TARGETS) {
  if (args.only && !args.only.split(',').includes(target.id)) continue;
  ctx.log(`${target.id}: ${target.label}`);
  try {
    const running = await target.start();
    const check = await streamOnce(new http.Agent(), running);
    if (!check.ok) throw new Error('the check request did not stream the whole reply');
    await load(running, 50, warmupS);
    // c1 twice: right after the c50 load, and once the processes have settled at c1. For
    // some seconds after a c50 load the tail at c1 is longer, whichever process is the
    // proxy.
    const c1Burst = await load(running, 1, durationS);
    await load(running, 1, settleS);
    const c1 = await load(running, 1, durationS);
    const c50 = await load(running, 50, durationS);
    results[target.id] = { label: target.label, c1, c1Burst, c50 };
    ctx.log(
      `  c1 p50 ${c1.p50Ms.toFixed(3)} ms p99 ${c1.p99Ms.toFixed(3)} ms (right after c50: p99 ${c1Burst.p99Ms.toFixed(3)} ms); c50 ${c50.rps.toFixed(0)} streams/s`,
    );
  } catch (error) {
    results[target.id] = { label: target.label, error: String(error?.message ?? error) };
    ctx.log(`  FAILED: ${results[target.id].error}`);
  } finally {
    for (const server of servers.splice(0)) await server.stop();
    for (const step of deferred.splice(0)) step();
  }
}

const loadAfter = os.loadavg();
const direct = results.upstream;
const fmt = (n) => (Number.isFinite(n) ? n.toFixed(3) : '—');
const lines = [
  `# Streaming bench (${new Date().toISOString()}, ${durationS} s per measurement)`,
  '',
  `Node ${process.version}, ${os.cpus().length} cores; load average (1 min) ${loadBefore[0]?.toFixed(2)} at the start, ${loadAfter[0]?.toFixed(2)} at the end.`,
  '',
  '| target | c1 TTFT p50 ms | c1 p99 ms | c1 added p50 / p99 ms | c1 right after c50: added p50 / p99 ms | c50 TTFT p50 ms | c50 p99 ms | c50 added p50 / p99 ms | streams/s (c50) | proxy CPU µs/stream (c50) | other CPU (c50) | failed |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|',
];
for (const [id, r] of Object.entries(results)) {
  if (r.error) {
    lines.push(`| ${id} | **FAILED**: ${r.error} |`);
    continue;
  }
  const added = (c) =>
    direct?.[c] && id !== 'upstream'
      ? `${fmt(r[c].p50Ms - direct[c].p50Ms)} / ${fmt(r[c].p99Ms - direct[c].p99Ms)}`
      : '—';
  lines.push(
    `| ${id} | ${fmt(r.c1.p50Ms)} | ${fmt(r.c1.p99Ms)} | ${added('c1')} | ${added('c1Burst')} | ${fmt(r.c50.p50Ms)} | ${fmt(r.c50.p99Ms)} | ${added('c50')} | ${r.c50.rps.toFixed(0)} | ${r.c50.proxyCpuUsPerStream.toFixed(0)} | ${(r.c50.otherCores * 100).toFixed(0)} % | ${r.c1.failed + r.c1Burst.failed + r.c50.failed} |`,
  );
}
const portkey = results.portkey?.c50?.rps;
for (const id of ['plauder-sse', 'plauder-v1']) {
  const rps = results[id]?.c50?.rps;
  if (rps && portkey) lines.push('', `${id} / portkey streams/s: ${(rps / portkey).toFixed(2)} ×`);
}
const markdown = `${lines.join('\n')}\n`;
fs.mkdirSync(args.out, { recursive: true });
fs.writeFileSync(path.join(args.out, 'stream-latest.md'), markdown);
fs.writeFileSync(
  path.join(args.out, 'stream-latest.json'),
  `${JSON.stringify(results, null, 2)}\n`,
);
process.stdout.write(markdown);
process.exit(Object.values(results).some((r) => r.error) ? 1 : 0);
