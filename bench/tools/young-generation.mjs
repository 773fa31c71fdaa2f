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
 *
 * The two `Map` patterns keep what they make for 100 iterations, as the window cache keeps a
 * session's window until its next turn: one replaces the window in the session's slot, the
 * other deletes the session's entry and sets a new one. Deleting and setting entries of a
 * long-lived `Map` promotes what its entries held (bench/README.md, "Windows replaced in
 * place"; src/sessions/window-cache.ts).
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
  'Map: the window replaced in its slot': () => {
    const slot = WINDOWS.get(`s${turn++ % SESSIONS}`);
    slot.window = { turn, turns: [SOURCE, EXTRA] };
    return slot;
  },
  'Map: the entry deleted and set again': () => {
    const key = `s${turn++ % SESSIONS}`;
    WINDOWS.delete(key);
    const slot = { window: { turn, turns: [SOURCE, EXTRA] } };
    WINDOWS.set(key, slot);
    return slot;
  },
};
const SOURCE = { id: 'key_1', name: 'bench', plan: 'bench', active: true };
const EXTRA = { limit: 1, minuteLimit: undefined };
/** A long-lived Map of 100 sessions' windows, as the window cache holds them. */
const SESSIONS = 100;
const WINDOWS = new Map(Array.from({ length: SESSIONS }, (_, i) => [`s${i}`, { window: {} }]));
let turn = 0;
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
  // A long-lived Map is in the old generation, and so is its table: a few collections first.
  if (child.startsWith('Map')) await age();
  process.stderr.write(`measured from ${Math.round(performance.now())} ms\n`);
  let kept = 0;
  for (let i = 0; i < 1_500_000; i++) {
    const object = make();
    if (object === undefined) kept++;
    if (i % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  process.exit(kept);
}

/** Keeps garbage alive across several scavenges, so that what exists now is promoted. */
async function age() {
  for (let round = 0; round < 4; round++) {
    const held = [];
    for (let i = 0; i < 300_000; i++) held.push({ i });
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const self = fileURLToPath(import.meta.url);
process.stdout.write(
  `Node ${process.version}\n\n| pattern | scavenges | mean pause ms | promoted KB per scavenge |\n|---|---:|---:|---:|\n`,
);
for (const name of Object.keys(PATTERNS)) {
  const run = spawnSync(process.execPath, ['--trace-gc-nvp', self, name], { encoding: 'utf8' });
  // Scavenges from the pattern's own loop on, after five of warm-up.
  const from = Number(/measured from (\d+) ms/.exec(run.stderr)?.[1] ?? 0);
  const lines = run.stdout
    .split('\n')
    .filter((line) => line.includes(' gc=s ') && Number(/(\d+) ms: /.exec(line)?.[1]) >= from)
    .slice(5);
  const field = (line, key) => Number(new RegExp(`\\b${key}=([0-9.]+)`).exec(line)?.[1] ?? 0);
  const mean = (key) => lines.reduce((sum, line) => sum + field(line, key), 0) / lines.length;
  // No scavenge after the warm-up: the loop's objects never filled the young generation.
  const cells =
    lines.length === 0
      ? ['–', '–']
      : [mean('pause').toFixed(2), (mean('promoted') / 1024).toFixed(0)];
  process.stdout.write(`| \`${name}\` | ${lines.length} | ${cells.join(' | ')} |\n`);
}
