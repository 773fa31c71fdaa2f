#!/usr/bin/env node
/**
 * The tail at concurrency 1 (or `--concurrency N`): one keep-alive connection sends `POST /api/chat` to plauder,
 * the next request when the previous answer has arrived, and the time to the answer's first
 * byte (for a stream: its first event after the headers' `: stream` comment counts as
 * well) is recorded. Prints p50 / p90 / p99 / p99.9 and how many answers took over 1 ms;
 * with `--gc`, the server runs under `--trace-gc-nvp` and the young-generation collections
 * of the measured part are summarised (pause, bytes promoted per scavenge). With
 * `--attribute`, each answer over 1 ms is put down to what ran during it: a collection of
 * the server (recorded by gc-probe.mjs, loaded with `--import`), else one of this client,
 * else neither; of the last, how many began in the same 50 ms of a second (the server's
 * WAL checkpoints run once a second).
 *
 *   npm run build && node bench/tools/tail.mjs [--core placeholder|builtin|openai]
 *     [--stream] [--seconds 6] [--warmup 2] [--concurrency 1] [--sessions 0] [--node-args "..."]
 *     [--gc] [--attribute]
 * `--sessions N` seeds N sessions with full windows and sends each request to the next.
 *
 * With `--gc` and `KEEP_GC_LOG=1` the server's stdout (its trace and its request log lines,
 * whose `ms` is the server's own time per request) is kept and its path printed.
 *
 * `--core openai` starts bench/servers/upstream.mjs as the model server. The plauder server
 * starts as in the bench (seeded SQLite, the shipped Node options unless --node-args).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { installCleanup } from '../lib/children.mjs';
import { MESSAGE } from '../lib/conversation.mjs';
import {
  openAiCoreEnv,
  scriptContext,
  shippedNodeArgs,
  startPlauder,
  startUpstream,
} from '../lib/scenarios.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values: args } = parseArgs({
  options: {
    core: { type: 'string', default: 'placeholder' },
    stream: { type: 'boolean', default: false },
    seconds: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '2' },
    'node-args': { type: 'string' },
    gc: { type: 'boolean', default: false },
    attribute: { type: 'boolean', default: false },
    concurrency: { type: 'string', default: '1' },
    sessions: { type: 'string', default: '0' },
  },
});

installCleanup();
const { ctx, servers, deferred } = scriptContext(root, {
  core: args.core,
  nodeArgs: args['node-args'],
});

const gcLog = args.gc ? path.join(os.tmpdir(), `plauder-tail-gc-${process.pid}.log`) : undefined;
const gcEvents = args.attribute
  ? path.join(os.tmpdir(), `plauder-tail-collections-${process.pid}.json`)
  : undefined;
const env = gcEvents ? { BENCH_GC_OUT: gcEvents } : {};
if (args.core === 'openai') {
  const upstream = await startUpstream(ctx);
  Object.assign(env, openAiCoreEnv(upstream));
}
const nodeArgs = ctx.opts.nodeArgs ?? shippedNodeArgs(root);
const sessions = Number(args.sessions);
const { server, seed, headers } = await startPlauder(ctx, {
  keys: 1,
  sessions,
  core: args.core,
  env,
  ...(gcLog ? { stdoutFile: gcLog } : {}),
  nodeArgs: [
    ...nodeArgs,
    ...(args.gc ? ['--trace-gc-nvp'] : []),
    ...(gcEvents ? ['--import', path.join(root, 'bench/tools/gc-probe.mjs')] : []),
  ],
});

const concurrency = Number(args.concurrency);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
// With --sessions N, the requests cycle through the N seeded sessions (full windows).
const bodies =
  sessions === 0
    ? [JSON.stringify({ message: MESSAGE })]
    : Array.from({ length: sessions }, (_, i) =>
        JSON.stringify({ message: seed.message, sessionId: `${seed.sessionPrefix}${i}` }),
      );
let sent = 0;
const requestHeaders = (body) => ({
  ...headers,
  'content-length': Buffer.byteLength(body),
  ...(args.stream ? { accept: 'text/event-stream' } : {}),
});

/** Milliseconds to the first byte of the answer (of a stream: to its first event). */
function once(starts) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    starts?.push(performance.timeOrigin + started);
    let first;
    const body = bodies[sent++ % bodies.length];
    const req = http.request(
      `${server.url}/api/chat`,
      { method: 'POST', agent, headers: requestHeaders(body) },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          if (first === undefined && (!args.stream || chunk.includes('event:'))) {
            first = performance.now() - started;
          }
        });
        res.on('end', () =>
          res.statusCode === 200 ? resolve(first) : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const scavengesBefore = () => (gcLog ? countScavenges(fs.readFileSync(gcLog, 'utf8')) : 0);
/** `concurrency` clients, each sending its next request when its answer has arrived. */
async function load(seconds, latencies, starts) {
  const end = performance.now() + seconds * 1000;
  const client = async () => {
    while (performance.now() < end) latencies.push(await once(starts));
  };
  await Promise.all(Array.from({ length: concurrency }, client));
}
await load(Number(args.warmup), []);
const skip = scavengesBefore();
const latencies = [];
const starts = [];
const clientCollections = [];
if (args.attribute) {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      clientCollections.push([performance.timeOrigin + entry.startTime, entry.duration]);
    }
  }).observe({ entryTypes: ['gc'] });
}
await load(Number(args.seconds), latencies, starts);
const answers = latencies.map((ms, i) => [starts[i], ms]);
latencies.sort((a, b) => a - b);
const at = (q) => latencies[Math.floor((latencies.length - 1) * q)].toFixed(3);
const label = `${args.core}${args.stream ? ' streamed' : ''}, concurrency ${concurrency}, node options: ${nodeArgs.join(' ') || "Node's defaults"}`;
process.stdout.write(
  `${label}: ${latencies.length} requests, p50 ${at(0.5)} p90 ${at(0.9)} p99 ${at(0.99)} p99.9 ${at(0.999)} ms, over 1 ms: ${latencies.filter((x) => x > 1).length}\n`,
);
for (const s of servers.splice(0)) await s.stop();
if (gcEvents) {
  process.stdout.write(`${attribute(answers, JSON.parse(fs.readFileSync(gcEvents, 'utf8')))}\n`);
  fs.rmSync(gcEvents, { force: true });
}
if (gcLog) {
  process.stdout.write(`${summariseScavenges(fs.readFileSync(gcLog, 'utf8'), skip)}\n`);
  if (process.env.KEEP_GC_LOG) process.stdout.write(`server stdout kept in ${gcLog}\n`);
  else fs.rmSync(gcLog, { force: true });
}
for (const step of deferred.splice(0)) step();
process.exit(0);

/**
 * Answers over 1 ms by what overlapped them: a collection of the server, else one of this
 * client, else neither; of the last, the most that began in one 50 ms phase of the second.
 */
function attribute(answers, serverCollections) {
  const overlaps = ([start, ms], collections) =>
    collections.some(([at, duration]) => at < start + ms && at + duration > start);
  const slow = answers.filter(([, ms]) => ms > 1);
  let server = 0;
  let client = 0;
  const other = [];
  for (const answer of slow) {
    if (overlaps(answer, serverCollections)) server++;
    else if (overlaps(answer, clientCollections)) client++;
    else other.push(answer);
  }
  const first = answers[0]?.[0] ?? 0;
  const last = answers.at(-1)?.[0] ?? 0;
  const collections = serverCollections.filter(([at]) => at >= first && at <= last).length;
  // The 50 ms of the second (its phase) in which most of them began: a once-a-second cause
  // (the WAL checkpoint) gathers them there.
  const phases = other.map(([start]) => (start - first) % 1000);
  let busiest = 0;
  for (let from = 0; from < 1000; from += 10) {
    const inWindow = phases.filter((phase) => (phase - from + 1000) % 1000 < 50).length;
    busiest = Math.max(busiest, inWindow);
  }
  return [
    `answers over 1 ms: ${slow.length} of ${answers.length}`,
    `  during a collection of the server: ${server} (the server collected ${collections} times while measuring)`,
    `  during one of this client: ${client}`,
    `  neither: ${other.length}, of which ${busiest} began in the same 50 ms of a second (phase): a once-a-second cause`,
  ].join('\n');
}

function countScavenges(log) {
  return log.split('\n').filter((line) => line.includes(' gc=s ')).length;
}

/** Averages of the `--trace-gc-nvp` scavenge lines after the first `skip` (the warm-up). */
function summariseScavenges(log, skip) {
  const lines = log
    .split('\n')
    .filter((line) => line.includes(' gc=s '))
    .slice(skip);
  const field = (line, name) => Number(new RegExp(`\\b${name}=([0-9.]+)`).exec(line)?.[1] ?? 0);
  const mean = (name) => lines.reduce((sum, line) => sum + field(line, name), 0) / lines.length;
  return `scavenges while measuring: ${lines.length}; mean pause ${mean('pause').toFixed(2)} ms, promoted ${(mean('promoted') / 1024).toFixed(0)} KB, allocated ${(mean('allocated') / 1024).toFixed(0)} KB per scavenge`;
}
