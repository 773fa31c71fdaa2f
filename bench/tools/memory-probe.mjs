/**
 * Loaded into a server by `memory.mjs` (`--import`, through NODE_OPTIONS, so every server
 * of a scenario has it): every 100 ms it reads this process's RSS and V8's heap statistics,
 * and whenever the RSS is at least 0.5 MB above the highest seen so far it records what the
 * memory is made of (V8's spaces, what V8 took with malloc, and /proc/self/smaps summed by
 * kind). On exit it writes the record and the series to `<BENCH_MEMORY_OUT>.<pid>`.
 */
import fs from 'node:fs';
import v8 from 'node:v8';

const out = process.env.BENCH_MEMORY_OUT;
const MB = 1024 * 1024;
const ARENA_BYTES = 64 * MB;
const started = performance.now();
const series = [];
let highest = { rssMb: 0 };

/** Resident kB of /proc/self/smaps by kind: the mapped files, malloc's arenas, the rest. */
function residentByKind() {
  const kinds = {};
  let mapping;
  const add = () => {
    if (mapping === undefined || mapping.rssKb === 0) return;
    kinds[mapping.kind] = (kinds[mapping.kind] ?? 0) + mapping.rssKb;
  };
  const lines = fs.readFileSync('/proc/self/smaps', 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(lines[i]);
    if (head) {
      add();
      mapping = { kind: kindOf(head, lines, i), rssKb: 0 };
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(lines[i]);
    if (rss && mapping) mapping.rssKb = Number(rss[1]);
  }
  add();
  return kinds;
}

/**
 * glibc gives each thread that mallocs an arena of its own: a 64 MB-aligned reservation,
 * its used part read-write and the rest `---p`. The main thread's arena is `[heap]`.
 */
function kindOf(head, lines, i) {
  const [, from, , , name] = head;
  if (name === '[heap]') return 'malloc, main arena';
  if (name.startsWith('/')) return 'mapped files';
  if (name !== '') return name;
  const start = Number.parseInt(from, 16);
  let j = i + 1;
  while (j < lines.length && !/^[0-9a-f]+-/.test(lines[j])) j++;
  const next = /^([0-9a-f]+)-([0-9a-f]+) ---p /.exec(lines[j] ?? '');
  if (start % ARENA_BYTES === 0 && next && Number.parseInt(next[2], 16) - start === ARENA_BYTES) {
    return 'malloc, thread arenas';
  }
  return 'anonymous (V8 heap, stacks, other)';
}

function sample() {
  const rssMb = process.memoryUsage.rss() / MB;
  const heap = v8.getHeapStatistics();
  const atS = (performance.now() - started) / 1000;
  series.push([atS, rssMb, heap.malloced_memory / MB]);
  if (rssMb < highest.rssMb + 0.5) return;
  const spaces = {};
  for (const space of v8.getHeapSpaceStatistics()) {
    spaces[space.space_name] = space.physical_space_size / MB;
  }
  highest = {
    rssMb,
    atS,
    v8PhysicalMb: heap.total_physical_size / MB,
    v8MallocedMb: heap.malloced_memory / MB,
    spacesMb: spaces,
    residentMb: Object.fromEntries(
      Object.entries(residentByKind()).map(([kind, kb]) => [kind, kb / 1024]),
    ),
    threads: fs.readdirSync('/proc/self/task').length,
  };
}

if (out) {
  setInterval(sample, 100).unref();
  process.on('exit', () => {
    sample();
    fs.writeFileSync(`${out}.${process.pid}`, JSON.stringify({ highest, series }));
  });
}
