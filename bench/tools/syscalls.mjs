#!/usr/bin/env node
/**
 * System calls and CPU per request of bench scenarios over HTTP: each scenario's servers
 * start as in the bench, autocannon loads the first of them with 50 connections, and
 * `perf stat -p <pid>` counts, over the measured part, the server process's CPU time
 * (`task-clock`, all its threads; split into user and system time from /proc), its context
 * switches and the system calls it enters, each divided by the requests answered. Counts do not depend on how busy the machine is;
 * the CPU time does, so run scenarios side by side and compare them within one round.
 *
 *   npm run build && node bench/tools/syscalls.mjs [--only proxy-floor,plauder-openai]
 *     [--rounds 2] [--seconds 5] [--warmup 2] [--checkout .]
 *
 * Needs `perf` with the `syscalls:` tracepoints (Debian's linux-perf, run as root).
 */
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuTimesOf, installCleanup } from '../lib/children.mjs';
import { closedLoop } from '../lib/load.mjs';
import { SCENARIOS, scriptContext } from '../lib/scenarios.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: args } = parseArgs({
  options: {
    only: { type: 'string', default: 'proxy-floor,plauder-openai' },
    rounds: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    checkout: { type: 'string', default: path.resolve(here, '../..') },
  },
});

const SYSCALLS = [
  'writev',
  'write',
  'read',
  'pwrite64',
  'pread64',
  'fcntl',
  'futex',
  'epoll_pwait',
];
const EVENTS = [
  'task-clock',
  'context-switches',
  ...SYSCALLS.map((s) => `syscalls:sys_enter_${s}`),
];

const probe = spawnSync('perf', ['stat', '-x', ',', '-e', EVENTS.join(','), '--', 'true'], {
  encoding: 'utf8',
});
if (probe.error || probe.status !== 0 || /not supported|<not counted>/.test(probe.stderr)) {
  console.error(`perf stat cannot count these events here:\n${probe.error ?? probe.stderr}`);
  process.exit(1);
}

const ids = args.only.split(',').filter(Boolean);
for (const id of ids) {
  if (!SCENARIOS.some((s) => s.id === id)) {
    console.error(`unknown scenario ${id}; node bench/run.mjs --list shows them`);
    process.exit(1);
  }
}
installCleanup();

/** perf's CSV lines (value,unit,event,…) → { event: value }. */
function parsePerf(text) {
  const counts = {};
  for (const line of text.trim().split('\n')) {
    const [value, , event] = line.split(',');
    if (event) counts[event.replace('syscalls:sys_enter_', '')] = Number(value);
  }
  return counts;
}

async function measure(id) {
  const { ctx, servers, deferred } = scriptContext(args.checkout, { core: 'builtin' });
  try {
    const started = await SCENARIOS.find((s) => s.id === id).start(ctx);
    const { pid } = started.servers[0];
    await closedLoop(started.target, { connections: 50, durationS: Number(args.warmup) });
    const perf = spawn('perf', ['stat', '-x', ',', '-e', EVENTS.join(','), '-p', String(pid)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let report = '';
    perf.stderr.on('data', (chunk) => (report += chunk));
    const exited = new Promise((resolve) => perf.once('close', resolve));
    const before = cpuTimesOf(pid);
    const load = await closedLoop(started.target, {
      connections: 50,
      durationS: Number(args.seconds),
    });
    const after = cpuTimesOf(pid);
    perf.kill('SIGINT');
    await exited;
    const requests = Object.values(load.statusCounts).reduce((a, b) => a + b, 0);
    if (load.non2xx > 0 || load.errors > 0 || requests === 0) {
      throw new Error(`${id}: ${load.non2xx} non-2xx answers, ${load.errors} errors`);
    }
    const counts = parsePerf(report);
    if (!Number.isFinite(counts['task-clock'])) throw new Error(`${id}: perf said ${report}`);
    const time = { user: after.user - before.user, system: after.system - before.system };
    return { requests, counts, time };
  } finally {
    for (const server of servers.splice(0).reverse()) await server.stop();
    for (const step of deferred.splice(0)) step();
  }
}

const header = [
  'scenario',
  'round',
  'requests',
  'CPU µs/req',
  'user / system µs/req',
  'ctx sw/req',
  ...SYSCALLS,
];
console.log(`| ${header.join(' | ')} |\n|${header.map(() => '---').join('|')}|`);
for (let round = 1; round <= Number(args.rounds); round++) {
  for (const id of round % 2 === 1 ? ids : [...ids].reverse()) {
    const { requests, counts, time } = await measure(id);
    const per = (event) => (counts[event] / requests).toFixed(2);
    const cpu = ((counts['task-clock'] * 1000) / requests).toFixed(1);
    const split = `${((time.user * 1e6) / requests).toFixed(1)} / ${((time.system * 1e6) / requests).toFixed(1)}`;
    const cells = [id, round, requests, cpu, split, per('context-switches'), ...SYSCALLS.map(per)];
    console.log(`| ${cells.join(' | ')} |`);
  }
}
process.exit(0);
