#!/usr/bin/env node
/**
 * Before / after: runs the same bench scenarios against an earlier commit and against the
 * working tree, alternating A B B A A B ... in one run, so both see the same machine and
 * neither always runs first.
 *
 * With `--rates` in the bench options, the scenarios with an open loop (e.g.
 * `plauder-session`) run it in every round too, and a second table compares its latency
 * percentiles, rate by rate.
 *
 *   node bench/tools/ab.mjs --baseline <git-ref> [--rounds 3] [-- <bench/run.mjs options>]
 *   node bench/tools/ab.mjs --baseline HEAD~1 -- --only plauder-openai --duration 5 --rates 500
 *
 * To compare code at the same Node options when the shipped ones changed in between, give
 * both sides the same: NODE_OPTIONS for the baseline's plauder (it inherits the bench's
 * environment) and `--after-args=--node-args=...` for the working tree's, e.g.
 *   NODE_OPTIONS=--max-semi-space-size=4 node bench/tools/ab.mjs --baseline 4d85eb8 \
 *     --after-args=--node-args=--max-semi-space-size=4 -- --only plauder-session
 *
 * The baseline is checked out into a temporary git worktree and built there; it shares this
 * tree's node_modules (a symlink), so it must not need a dependency this tree lacks. Each
 * side runs with its own bench/run.mjs, writing to a temp dir; the table compares the
 * closed-loop req/s and server CPU per request of every scenario, round by round.
 *
 * On a noisy machine one pair of rounds can differ by a third with nothing changed (an A/A
 * run, `--baseline HEAD`, shows how much). `--control <scenario id>` names a scenario whose
 * code is the same on both sides (e.g. `portkey` or `fastify`; it must be in `--only`):
 * each scenario's req/s is then also divided by the control's of the same side and round,
 * and the medians table gives the change of that quotient, which the machine's speed in
 * that round cancels out of.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { median } from '../lib/report.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values, positionals } = parseArgs({
  options: {
    baseline: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    // Options only the working tree's bench gets (one the baseline's bench may not know).
    // Each value is one argument (repeatable): `--after-args="--node-args=A B"` passes two
    // Node options in one bench argument.
    'after-args': { type: 'string', multiple: true, default: [] },
    // A scenario that is the same on both sides, to divide the others by (see above).
    control: { type: 'string' },
  },
  allowPositionals: true,
});
if (!values.baseline) {
  process.stderr.write(
    'usage: node bench/tools/ab.mjs --baseline <git-ref> [--rounds N] [--control <scenario>] [-- bench options]\n',
  );
  process.exit(2);
}
const rounds = Number(values.rounds);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'plauder-ab-'));
const baselineDir = path.join(work, 'baseline');
const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
const baselineCommit = git('rev-parse', '--short', values.baseline);

function cleanUp() {
  spawnSync('git', ['worktree', 'remove', '--force', baselineDir], { cwd: root });
  fs.rmSync(work, { recursive: true, force: true });
}
process.on('SIGINT', () => {
  cleanUp();
  process.exit(130);
});

try {
  git('worktree', 'add', '--detach', baselineDir, values.baseline);
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(baselineDir, 'node_modules'));
  for (const dir of [baselineDir, root]) {
    execFileSync(
      process.execPath,
      [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      {
        cwd: dir,
        stdio: 'inherit',
      },
    );
  }
  const sides = [
    { name: `baseline ${baselineCommit}`, dir: baselineDir },
    { name: 'working tree', dir: root },
  ];
  const results = [];
  const openResults = [];
  for (let round = 1; round <= rounds; round++) {
    // A B, then B A, ...: whichever side runs second in a round gains or loses the same in
    // every other round (an A/A run in one order showed the second side 6-16 % cheaper).
    const order = round % 2 === 1 ? sides : [sides[1], sides[0]];
    for (const side of order) {
      const out = path.join(work, `${round}-${side === sides[0] ? 'a' : 'b'}`);
      process.stderr.write(`\n=== round ${round}: ${side.name}\n`);
      const run = spawnSync(
        process.execPath,
        [
          path.join(side.dir, 'bench/run.mjs'),
          // This tool alternates rounds itself: one bench round per side and round (a bench
          // from before --rounds existed runs one anyway).
          ...(knowsRounds(side.dir) ? ['--rounds', '1'] : []),
          ...positionals,
          ...(side.dir === root ? values['after-args'] : []),
          '--out',
          out,
        ],
        { cwd: side.dir, stdio: ['ignore', 'ignore', 'inherit'] },
      );
      if (run.status !== 0) process.stderr.write(`  (bench exited with ${run.status})\n`);
      const file = path.join(out, 'latest.json');
      if (!fs.existsSync(file)) continue;
      for (const row of JSON.parse(fs.readFileSync(file, 'utf8')).rows ?? []) {
        if (row.closed) results.push({ round, side: side.name, id: row.id, ...cpuOf(row.closed) });
        for (const open of row.open ?? []) {
          openResults.push({ round, side: side.name, id: row.id, ...open });
        }
      }
    }
  }
  process.stdout.write(table(results, sides));
  if (openResults.length > 0) process.stdout.write(openTable(openResults, sides));
} finally {
  cleanUp();
}

function cpuOf(closed) {
  return {
    rps: closed.rps,
    cpuMsPerReq: (closed.cpuCores / closed.rps) * 1000,
    // The rest of the machine (on PostgreSQL rows the database server is in it).
    otherMsPerReq: (closed.otherCores / closed.rps) * 1000,
  };
}

function table(results, sides) {
  const control = values.control;
  const ids = [...new Set(results.map((r) => r.id))];
  const lines = [
    `Baseline ${baselineCommit} vs the working tree, ${rounds} alternating rounds; bench options: ${positionals.join(' ') || '(defaults)'}${values['after-args'].length > 0 ? `; working tree only: ${values['after-args'].join(' ')}` : ''}${process.env.NODE_OPTIONS ? `; NODE_OPTIONS=${process.env.NODE_OPTIONS}` : ''}`,
    '',
    '| scenario | round | req/s before | req/s after | × | CPU ms/req before | CPU ms/req after | other CPU ms/req before | after |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const medians = [];
  for (const id of ids) {
    const pairs = [];
    for (let round = 1; round <= rounds; round++) {
      const [a, b] = sides.map((s) =>
        results.find((r) => r.id === id && r.round === round && r.side === s.name),
      );
      if (!a || !b) continue;
      pairs.push([a, b]);
      lines.push(
        `| \`${id}\` | ${round} | ${Math.round(a.rps)} | ${Math.round(b.rps)} | ${(b.rps / a.rps).toFixed(2)} | ${a.cpuMsPerReq?.toFixed(3)} | ${b.cpuMsPerReq?.toFixed(3)} | ${a.otherMsPerReq?.toFixed(3)} | ${b.otherMsPerReq?.toFixed(3)} |`,
      );
    }
    if (pairs.length === 0) continue;
    const ratio = median(pairs.map(([a, b]) => b.rps / a.rps));
    const cpuRatio = median(pairs.map(([a, b]) => b.cpuMsPerReq / a.cpuMsPerReq));
    const cpuA = median(pairs.map(([a]) => a.cpuMsPerReq));
    const cpuB = median(pairs.map(([, b]) => b.cpuMsPerReq));
    const otherRatio = median(pairs.map(([a, b]) => b.otherMsPerReq / a.otherMsPerReq));
    const controlled = control === undefined ? '' : ` ${againstControl(pairs)} |`;
    medians.push(
      `| \`${id}\` | ${ratio.toFixed(2)} | ${cpuA.toFixed(3)} | ${cpuB.toFixed(3)} | ${cpuRatio.toFixed(2)} | ${otherRatio.toFixed(2)} |${controlled}`,
    );
  }
  lines.push(
    '',
    'Medians over the rounds (× is after / before, per round, then the median):',
    '',
    `| scenario | req/s × | CPU ms/req before | CPU ms/req after | CPU × | other CPU × |${control === undefined ? '' : ` req/s ÷ \`${control}\`'s, before → after (×) |`}`,
    `|---|---:|---:|---:|---:|---:|${control === undefined ? '' : '---:|'}`,
    ...medians,
  );

  /** Medians of the scenario's req/s over the control's of the same side and round. */
  function againstControl(pairs) {
    const quotients = [];
    for (const [a, b] of pairs) {
      const of = (side, row) =>
        results.find((r) => r.id === control && r.round === row.round && r.side === side.name);
      const ca = of(sides[0], a);
      const cb = of(sides[1], b);
      if (ca && cb) quotients.push([a.rps / ca.rps, b.rps / cb.rps]);
    }
    if (quotients.length === 0) return `(no \`${control}\` rows)`;
    const before = median(quotients.map(([qa]) => qa));
    const after = median(quotients.map(([, qb]) => qb));
    const change = median(quotients.map(([qa, qb]) => qb / qa));
    return `${before.toFixed(2)} → ${after.toFixed(2)} (× ${change.toFixed(2)})`;
  }
  return `${lines.join('\n')}\n`;
}

/** The open loop's latency (ms from each request's scheduled time), before and after. */
function openTable(results, sides) {
  const keys = [...new Set(results.map((r) => `${r.id} ${r.rate}`))];
  const fields = ['p50Ms', 'p99Ms', 'p999Ms', 'maxMs'];
  const lines = [
    '',
    'Open loop (latency from the scheduled send time; ms, before / after):',
    '',
    '| scenario | offered/s | round | p50 | p99 | p99.9 | max | dropped before / after |',
    '|---|---:|---:|---|---|---|---|---|',
  ];
  const medians = [];
  for (const key of keys) {
    const [id, rate] = key.split(' ');
    const pairs = [];
    for (let round = 1; round <= rounds; round++) {
      const [a, b] = sides.map((s) =>
        results.find(
          (r) => r.id === id && String(r.rate) === rate && r.round === round && r.side === s.name,
        ),
      );
      if (!a || !b) continue;
      pairs.push([a, b]);
      const cells = fields.map((f) => `${a[f].toFixed(2)} / ${b[f].toFixed(2)}`);
      const dropped = `${a.dropped + a.unanswered} / ${b.dropped + b.unanswered}`;
      lines.push(`| \`${id}\` | ${rate} | ${round} | ${cells.join(' | ')} | ${dropped} |`);
    }
    if (pairs.length === 0) continue;
    const cells = fields.map((f) => {
      const before = median(pairs.map(([a]) => a[f]));
      const after = median(pairs.map(([, b]) => b[f]));
      return `${before.toFixed(2)} / ${after.toFixed(2)}`;
    });
    medians.push(`| \`${id}\` | ${rate} | ${cells.join(' | ')} |`);
  }
  lines.push(
    '',
    'Medians over the rounds:',
    '',
    '| scenario | offered/s | p50 | p99 | p99.9 | max |',
    '|---|---:|---|---|---|---|',
    ...medians,
  );
  return `${lines.join('\n')}\n`;
}

/** Whether the bench of a checkout has `--rounds` (commits before it do not). */
function knowsRounds(dir) {
  return fs.readFileSync(path.join(dir, 'bench/run.mjs'), 'utf8').includes('rounds: {');
}
