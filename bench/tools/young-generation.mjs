#!/usr/bin/env node
/**
 * Which per-request objects outlive V8's young generation on this Node: each pattern runs
 * alone in a child process under `--trace-gc-nvp`, allocating one object per iteration and
 * dropping it at once, and the scavenges after the warm-up are summarised. A pattern whose
 * objects die young promotes nothing; one that V8 keeps promotes most of what it allocates.
 *
 *   node bench/tools/young-generation.mjs
 *   npx -y -p node@22 node bench/tools/young-generation.mjs     # another Node
 *
 * On Node 20.20 (V8 11.3) the spread followed by another member, the getter in an object
 * literal and the AbortSignal promote megabytes per scavenge; see bench/README.md,
 * "Garbage the request path leaves", and test/house/object-literals.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PATTERNS = {
  'literal { a, b, c }': () => ({ id: SOURCE.id, plan: SOURCE.plan, limit: 1 }),
  'spread last { c, ...a }': () => ({ limit: 1, ...SOURCE }),
  'spread then member { ...a, c }': () => ({ ...SOURCE, limit: 1 }),
  'two spreads { ...a, ...b }': () => ({ ...SOURCE, ...EXTRA }),
  'Object.assign({}, a, { c })': () => Object.assign({}, SOURCE, { limit: 1 }),
  'getter in a literal { get c() }': () => ({
    id: SOURCE.id,
    get limit() {
      return 1;
    },
  }),
  'class with a getter': () => new WithGetter(),
  'new AbortController().signal': () => new AbortController().signal,
  'plain cancel object': () => new Cancel(),
};
const SOURCE = { id: 'key_1', name: 'bench', plan: 'bench', active: true };
const EXTRA = { limit: 1, minuteLimit: undefined };
class WithGetter {
  id = SOURCE.id;
  get limit() {
    return 1;
  }
}
class Cancel {
  aborted = false;
  reason = undefined;
}

const [, , child] = process.argv;
if (child !== undefined) {
  // In the child: allocate and drop, yielding to the event loop now and then.
  const make = PATTERNS[child];
  let kept = 0;
  for (let i = 0; i < 1_500_000; i++) {
    const object = make();
    if (object === undefined) kept++;
    if (i % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  process.exit(kept);
}

const self = fileURLToPath(import.meta.url);
process.stdout.write(
  `Node ${process.version}\n\n| pattern | scavenges | mean pause ms | promoted KB per scavenge |\n|---|---:|---:|---:|\n`,
);
for (const name of Object.keys(PATTERNS)) {
  const run = spawnSync(process.execPath, ['--trace-gc-nvp', self, name], { encoding: 'utf8' });
  const lines = run.stdout
    .split('\n')
    .filter((line) => line.includes(' gc=s '))
    .slice(5);
  const field = (line, key) => Number(new RegExp(`\\b${key}=([0-9.]+)`).exec(line)?.[1] ?? 0);
  const mean = (key) => lines.reduce((sum, line) => sum + field(line, key), 0) / lines.length;
  process.stdout.write(
    `| \`${name}\` | ${lines.length} | ${mean('pause').toFixed(2)} | ${(mean('promoted') / 1024).toFixed(0)} |\n`,
  );
}
