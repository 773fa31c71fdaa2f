#!/usr/bin/env node
/**
 * What a server's resident memory is made of at its highest, and when that was. Each
 * scenario of the bench (`--only`, ids as in `run.mjs --list`) starts with
 * `memory-probe.mjs` loaded (`--import` through NODE_OPTIONS) and is loaded by the closed
 * loop (50 connections) for `--seconds`, with no warm-up: the bench's peak RSS column
 * (VmHWM) counts the start too (for the proxy path, V8 compiling undici's HTTP parser after
 * the first upstream request: `undici-parser.mjs`).
 *
 *   npm run build && node bench/tools/memory.mjs [--only proxy-floor,plauder-openai]
 *     [--seconds 10] [--rounds 1]
 *
 * Prints, per scenario and round: VmHWM (what the bench reports as peak RSS); the RSS at the
 * end of the load; at the highest RSS the probe saw, V8's young and other spaces, what V8
 * had taken with malloc itself (`malloced_memory`: its compilers' zones, the string table),
 * malloc's arenas, the mapped files and the rest; and the highest V8 malloc of the run with
 * the RSS at that time.
 * Scenarios run one after the other; with several rounds, in reverse order every other round.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { installCleanup, memoryOf } from '../lib/children.mjs';
import { closedLoop } from '../lib/load.mjs';
import { SCENARIOS, scriptContext } from '../lib/scenarios.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const { values: args } = parseArgs({
  options: {
    only: { type: 'string', default: 'proxy-floor,plauder-openai' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '1' },
  },
});

installCleanup();
const ids = args.only.split(',').filter(Boolean);
for (const id of ids) {
  if (!SCENARIOS.some((s) => s.id === id)) throw new Error(`no scenario ${id}`);
}
const outBase = path.join(os.tmpdir(), `plauder-memory-${process.pid}`);
process.env.BENCH_MEMORY_OUT = outBase;
process.env.NODE_OPTIONS = [
  process.env.NODE_OPTIONS,
  `--import ${path.join(here, 'memory-probe.mjs')}`,
]
  .filter(Boolean)
  .join(' ');

async function measure(id) {
  const scenario = SCENARIOS.find((s) => s.id === id);
  const { ctx } = scriptContext(root, { core: 'builtin' });
  const owned = [];
  const { servers, target } = await scenario.start({ ...ctx, own: (s) => owned.push(s) });
  const main = servers[0];
  let result;
  try {
    result = await closedLoop(target, { connections: 50, durationS: Number(args.seconds) });
    const { rssKb, hwmKb } = memoryOf(main.pid);
    result.endRssMb = rssKb / 1024;
    result.hwmMb = hwmKb / 1024;
  } finally {
    for (const server of [...new Set([...servers, ...owned.reverse()])]) await server.stop();
  }
  const file = `${outBase}.${main.pid}`;
  const probe = JSON.parse(fs.readFileSync(file, 'utf8'));
  for (const name of fs.readdirSync(os.tmpdir())) {
    if (name.startsWith(path.basename(outBase))) fs.rmSync(path.join(os.tmpdir(), name));
  }
  return { ...result, probe };
}

const f = (n) => (n === undefined ? '–' : n.toFixed(1));
const columns = [];
for (let round = 1; round <= Number(args.rounds); round++) {
  for (const id of round % 2 === 1 ? ids : [...ids].reverse()) {
    const m = await measure(id);
    const { highest, series } = m.probe;
    const mallocPeak = series.reduce((a, b) => (b[2] > a[2] ? b : a));
    const spaces = highest.spacesMb;
    const young = (spaces.new_space ?? 0) + (spaces.new_large_object_space ?? 0);
    const resident = highest.residentMb;
    const arenas = (resident['malloc, main arena'] ?? 0) + (resident['malloc, thread arenas'] ?? 0);
    columns.push({
      name: `${id} (${round})`,
      rows: [
        Math.round(m.rps).toString(),
        f(m.hwmMb),
        f(m.endRssMb),
        `${f(highest.rssMb)} at ${highest.atS.toFixed(1)} s`,
        f(resident['mapped files']),
        f(young),
        f(highest.v8PhysicalMb - young),
        f(highest.v8MallocedMb),
        f(arenas),
        f(resident['anonymous (V8 heap, stacks, other)']),
        `${f(mallocPeak[2])} at ${mallocPeak[0].toFixed(1)} s (RSS ${f(mallocPeak[1])})`,
      ],
    });
    console.error(`${id} round ${round}: ${Math.round(m.rps)} req/s, VmHWM ${f(m.hwmMb)} MB`);
  }
}

const labels = [
  'req/s',
  "VmHWM, MB (the bench's peak RSS)",
  'RSS at the end of the load',
  'highest RSS the probe saw',
  '… mapped files (node, libraries)',
  '… V8 young generation',
  '… V8 old generation, code, large objects',
  "… V8's own malloc (malloced_memory), within the arenas",
  '… malloc arenas (main and threads)',
  '… other anonymous memory (V8 heap, stacks)',
  'highest V8 malloc of the run',
];
console.log(`| MB | ${columns.map((c) => c.name).join(' | ')} |`);
console.log(`|---|${columns.map(() => '---:').join('|')}|`);
labels.forEach((label, i) => {
  console.log(`| ${label} | ${columns.map((c) => c.rows[i]).join(' | ')} |`);
});
