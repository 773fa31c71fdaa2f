#!/usr/bin/env node
/**
 * What undici's first requests cost in memory, alone: V8's malloc'd memory (`malloced_memory`,
 * and its high-water mark `peak_malloced_memory`) and the RSS of this process, every 50 ms,
 * around the first request of an HTTP client to a local server, then `--seconds` at 50
 * concurrent requests. undici parses HTTP with llhttp compiled to WebAssembly, which V8
 * compiles lazily, on first use; node:http's client uses the same parser built into Node.
 *
 *   node bench/tools/undici-parser.mjs [--client undici|node] [--no-first] [--seconds 2]
 *
 * Also prints the CPU time of this process (client and the same server) per request of the
 * concurrent part: the server's share is the same for either client.
 *
 * `--no-first`: no lone first request and pause, the concurrent requests at once.
 * Run it under Node options to see what they change, e.g. `node --no-liftoff …` (the parser
 * compiled by the optimizing compiler at once).
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { Pool } from 'undici';

const { values: args } = parseArgs({
  options: {
    client: { type: 'string', default: 'undici' },
    'no-first': { type: 'boolean', default: false },
    seconds: { type: 'string', default: '2' },
  },
});

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('{"ok":true}'));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

const post = clientFor(args.client);
const MB = 1024 * 1024;
const t0 = performance.now();
const samples = [];
const sample = (label = '') => {
  const heap = v8.getHeapStatistics();
  samples.push({
    ms: Math.round(performance.now() - t0),
    malloced: heap.malloced_memory / MB,
    peak: heap.peak_malloced_memory / MB,
    rss: process.memoryUsage.rss() / MB,
    label,
  });
};
const timer = setInterval(sample, 50);
sample('start');
if (!args['no-first']) {
  await post();
  sample('first request answered');
  await new Promise((resolve) => setTimeout(resolve, 600));
  sample('600 ms later');
}
let answered = 0;
const cpu0 = process.cpuUsage();
const end = performance.now() + Number(args.seconds) * 1000;
await Promise.all(
  Array.from({ length: 50 }, async () => {
    while (performance.now() < end) {
      await post();
      answered++;
    }
  }),
);
const cpu = process.cpuUsage(cpu0);
const cpuPerRequest = (cpu.user + cpu.system) / answered;
sample(`${answered} requests at concurrency 50 answered`);
clearInterval(timer);
server.close();

console.log(
  `client: ${args.client}; Node ${process.version}; options: ${process.execArgv.join(' ') || 'none'}`,
);
console.log(
  `at concurrency 50: ${answered} requests in ${args.seconds} s, ${cpuPerRequest.toFixed(1)} µs of this process's CPU per request (client and server)`,
);
console.log('| ms | V8 malloced MB | its peak MB | RSS MB | |');
console.log('|---:|---:|---:|---:|---|');
let shown = -1;
for (const [i, s] of samples.entries()) {
  // Every sample while the malloc'd memory is above 2 MB, else one in ten, and the labelled.
  if (s.label || s.malloced > 2 || i - shown >= 10) {
    shown = i;
    console.log(
      `| ${s.ms} | ${s.malloced.toFixed(1)} | ${s.peak.toFixed(1)} | ${s.rss.toFixed(0)} | ${s.label} |`,
    );
  }
}
process.exit(0);

function clientFor(kind) {
  if (kind === 'undici') {
    const pool = new Pool(origin, { connections: 50 });
    return async () => {
      const res = await pool.request({ path: '/', method: 'POST', body: '{"a":1}' });
      await res.body.text();
    };
  }
  if (kind === 'node') {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
    return () =>
      new Promise((resolve, reject) => {
        const req = http.request(`${origin}/`, { method: 'POST', agent }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        req.end('{"a":1}');
      });
  }
  throw new Error(`--client undici|node, not ${kind}`);
}
