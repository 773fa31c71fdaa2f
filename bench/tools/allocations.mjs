#!/usr/bin/env node
/**
 * Bytes allocated per request, and where: the server runs with V8's sampling heap profiler
 * (`allocation-probe.mjs`, every 512 bytes on average, objects that were collected
 * included) while a fixed number of requests is answered after a warm-up. What a request
 * allocates hardly depends on what else the machine is doing, unlike its CPU time, so a
 * change that allocates less shows on a busy machine where req/s spread by a third.
 * Allocating less is not the same as costing less: read it beside a timed run.
 *
 *   npm run build && node bench/tools/allocations.mjs <checkout> [<checkout> …]
 *     [--core openai|builtin|placeholder] [--sessions 0] [--warmup 20000]
 *     [--requests 10000] [--concurrency 20] [--top 20] [--rounds 1]
 *
 * Each checkout needs its `dist/` built; with several, they run one after the other per
 * round. `--core openai` starts bench/servers/upstream.mjs as the model server; `--sessions N`
 * seeds N sessions with full windows and sends each request to the next. Prints KB per
 * request in all, then the top functions by what they allocated themselves and the top
 * plauder functions (`dist/`) by what was allocated while each was the innermost plauder
 * frame on the stack (the library and Node code it called included).
 */
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
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

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    core: { type: 'string', default: 'openai' },
    sessions: { type: 'string', default: '0' },
    warmup: { type: 'string', default: '20000' },
    requests: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '20' },
    top: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '1' },
  },
});
if (positionals.length === 0) {
  console.error('usage: node bench/tools/allocations.mjs <checkout> [<checkout> …] [options]');
  process.exit(2);
}
const sessions = Number(args.sessions);
const requests = Number(args.requests);
const concurrency = Number(args.concurrency);
const top = Number(args.top);

installCleanup();

/** Starts plauder from `root` with the probe loaded; `out` is where its profile goes. */
async function start(root, out) {
  const { ctx, servers, deferred } = scriptContext(root, { core: args.core });
  const stop = async () => {
    for (const server of servers.reverse()) await server.stop();
    for (const step of deferred.reverse()) await step();
  };
  const env = { BENCH_ALLOCATIONS_OUT: out };
  if (args.core === 'openai') {
    const upstream = await startUpstream(ctx);
    Object.assign(env, openAiCoreEnv(upstream));
  }
  const { server, seed, headers } = await startPlauder(ctx, {
    keys: 1,
    sessions,
    core: args.core,
    env,
    nodeArgs: [...shippedNodeArgs(root), '--import', path.join(here, 'allocation-probe.mjs')],
  });
  const bodies =
    sessions === 0
      ? [JSON.stringify({ message: MESSAGE })]
      : Array.from({ length: sessions }, (_, i) =>
          JSON.stringify({ message: seed.message, sessionId: `${seed.sessionPrefix}${i}` }),
        );
  return { server, headers, bodies, stop };
}

/** Sends `count` requests from `concurrency` keep-alive clients; every answer must be a 200. */
async function send(target, count) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  let sent = 0;
  const one = () =>
    new Promise((resolve, reject) => {
      const body = target.bodies[sent++ % target.bodies.length];
      const headers = { ...target.headers, 'content-length': Buffer.byteLength(body) };
      const req = http.request(
        `${target.server.url}/api/chat`,
        { method: 'POST', agent, headers },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200 ? resolve() : reject(new Error(`status ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const client = async () => {
    while (sent < count) await one();
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  agent.destroy();
}

/** Waits for the probe to write `file`; fails if the server has exited meanwhile. */
async function until(file, server) {
  while (!fs.existsSync(file)) {
    if (!server.running()) throw new Error(`the server exited:\n${server.stderrTail()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Sums the profile's samples: all, by function, by innermost plauder frame. */
function summarise(profile) {
  const byFunction = new Map();
  const byPlauder = new Map();
  let total = 0;
  const add = (map, key, bytes) => map.set(key, (map.get(key) ?? 0) + bytes);
  const walk = (node, plauder) => {
    const { functionName, url, lineNumber } = node.callFrame;
    // ESM modules have `file://` URLs, CommonJS ones plain paths.
    const file = url.replace(/^(?:file:\/\/)?\/.*?\/(dist|node_modules)\//, '$1/');
    const name = `${functionName || '(anonymous)'} ${file ? `${file}:${lineNumber + 1}` : ''}`;
    const site = file.startsWith('dist/') ? name : plauder;
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(byFunction, name.trim(), node.selfSize);
      add(byPlauder, site ?? '(no plauder frame)', node.selfSize);
    }
    for (const child of node.children) walk(child, site);
  };
  walk(profile.head, undefined);
  return { total, byFunction, byPlauder };
}

const kb = (bytes) => (bytes / requests / 1024).toFixed(2).padStart(7);
const ranked = (map) =>
  [...map]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([name, bytes]) => `  ${kb(bytes)}  ${name}`)
    .join('\n');

const what = `${args.core} core${sessions > 0 ? `, ${sessions} sessions` : ''}`;
console.log(
  `${what}: ${args.warmup} requests of warm-up, then ${requests} sampled, ${concurrency} in flight`,
);
for (let round = 1; round <= Number(args.rounds); round++) {
  for (const checkout of positionals) {
    const root = path.resolve(checkout);
    const out = path.join(os.tmpdir(), `plauder-allocations-${process.pid}-${round}.json`);
    const target = await start(root, out);
    try {
      await send(target, Number(args.warmup));
      process.kill(target.server.pid, 'SIGUSR2');
      await until(`${out}.started`, target.server);
      await send(target, requests);
      process.kill(target.server.pid, 'SIGUSR2');
      await until(out, target.server);
      // The profile is written in one call; wait until it parses.
      let profile;
      while (profile === undefined) {
        try {
          profile = JSON.parse(fs.readFileSync(out, 'utf8'));
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
      const { total, byFunction, byPlauder } = summarise(profile);
      console.log(`\nround ${round}, ${root}: ${kb(total).trim()} KB allocated per request`);
      console.log(`by function (its own allocations), KB per request:\n${ranked(byFunction)}`);
      console.log(`by innermost plauder function, KB per request:\n${ranked(byPlauder)}`);
    } finally {
      await target.stop();
      fs.rmSync(out, { force: true });
      fs.rmSync(`${out}.started`, { force: true });
    }
  }
}
process.exit(0);
