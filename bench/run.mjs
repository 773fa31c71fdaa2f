/**
 * plauder against its peers and against the machine's limit, in one run: every server is
 * its own child process, started, checked, loaded and stopped one after the other; the
 * load comes from this process. Writes bench/results/latest.md and latest.json and prints
 * the Markdown. Never part of `npm test`. See bench/README.md.
 *
 *   npm run bench                          # build, then the full run (3 rounds, ~22 minutes)
 *   npm run bench -- --quick               # 2–3 minute smoke run (1 round)
 *   node bench/run.mjs --only plauder-session --cpu-prof   # after `npm run build`
 *   node bench/run.mjs --help
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { installCleanup, memoryOf, runNode, watchProcess } from './lib/children.mjs';
import { closedLoop, openLoop, sequential } from './lib/load.mjs';
import { medianOfRounds, renderMarkdown, streamTarget, targetsOfRows } from './lib/report.mjs';
import { SCENARIOS } from './lib/scenarios.mjs';
import { formatSummary, summariseProfile } from './tools/summarise-profile.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const HELP = `node bench/run.mjs [options]       (npm run bench -- [options] builds first)

  --quick              smoke run, 2–3 minutes: --duration 2 --warmup 1 --rounds 1
  --rounds N           rounds of the closed loop and of concurrency 1 (default 3): every
                       scenario once per round, in reverse order every other round; the
                       tables and targets give the medians (the open loop runs in round 1)
  --duration S         seconds per closed-loop measurement, per open-loop rate and at
                       concurrency 1 (default 10)
  --warmup S           warm-up seconds before the closed loop (default 3); the open-loop
                       rates warm up for min(S, 2) seconds
  --settle S           seconds at concurrency 1 before it is measured (default 6): the
                       first seconds after a load have a longer tail
  --connections N      closed-loop connections (default 50)
  --rates R1,R2        open-loop offered rates in requests/s (default 500,2000)
  --sockets N          open-loop keep-alive socket pool (default 64)
  --only ID,ID         run only these scenarios     --skip ID,ID   run all but these
  --core KIND          core of the plauder rows: builtin (default) or placeholder
  --log-level L        PLAUDER_LOG_LEVEL of plauder (default info, logs go to /dev/null)
  --node-args "A B"    Node options of every plauder server instead of the shipped ones
                       (those of the plauder command's shebang); "" for Node's defaults
  --cpu-prof           run the plauder server of plauder, plauder-session and plauder-openai
                       under node --cpu-prof (bench/results/profiles/) and print the top
                       self-time functions
  --no-stream          leave out the streaming bench (stream/stream-bench.mjs), which a run
                       without --only runs after the scenarios, for the streaming target
  --out DIR            where latest.md / latest.json go (default bench/results)
  --list               list the scenarios and exit

Scenarios: ${SCENARIOS.map((s) => s.id).join(', ')}`;

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    settle: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string', default: '50' },
    rates: { type: 'string', default: '500,2000' },
    sockets: { type: 'string', default: '64' },
    only: { type: 'string' },
    skip: { type: 'string' },
    core: { type: 'string', default: 'builtin' },
    'log-level': { type: 'string', default: 'info' },
    'node-args': { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'no-stream': { type: 'boolean', default: false },
    out: { type: 'string', default: path.join(root, 'bench/results') },
    list: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (values.help) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}
if (values.list) {
  for (const s of SCENARIOS) process.stdout.write(`${s.id.padEnd(16)} ${s.label}\n`);
  process.exit(0);
}

const opts = {
  duration: positive('duration', values.duration ?? (values.quick ? '2' : '10')),
  warmup: positive('warmup', values.warmup ?? (values.quick ? '1' : '3')),
  settle: positive('settle', values.settle ?? (values.quick ? '1' : '6')),
  rounds: positive('rounds', values.rounds ?? (values.quick ? '1' : '3')),
  connections: positive('connections', values.connections),
  rates: values.rates.split(',').map((r) => positive('rates', r)),
  sockets: positive('sockets', values.sockets),
  core: values.core,
  logLevel: values['log-level'],
  nodeArgs: values['node-args']?.split(/\s+/).filter(Boolean),
  cpuProf: values['cpu-prof'],
  quick: values.quick,
};
if (!['builtin', 'placeholder'].includes(opts.core)) fail('--core: builtin or placeholder');
if (!Number.isInteger(opts.rounds))
  fail(`--rounds: expected a whole number, got "${values.rounds}"`);
const selected = select(values.only, values.skip);

function positive(name, raw) {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0)
    fail(`--${name}: expected a positive number, got "${raw}"`);
  return value;
}

function select(only, skip) {
  const ids = new Set(SCENARIOS.map((s) => s.id));
  const list = (raw) => (raw ?? '').split(',').filter(Boolean);
  for (const id of [...list(only), ...list(skip)])
    if (!ids.has(id)) fail(`unknown scenario "${id}" (--list)`);
  const keep = only ? new Set(list(only)) : ids;
  for (const id of list(skip)) keep.delete(id);
  return SCENARIOS.filter((s) => keep.has(s.id));
}

function fail(message) {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(2);
}

if (!fs.existsSync(path.join(root, 'dist/cli/main.js')))
  fail('dist/ is missing: run `npm run build` first');

installCleanup();
const log = (line) => process.stderr.write(`${line}\n`);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
const profileDir = path.join(values.out, 'profiles');
const ctx = {
  root,
  opts,
  log,
  stamp,
  profileDir,
  window: 20,
  // One secret for the seeder and the server, so seeded sessions open.
  secret: randomBytes(32).toString('base64'),
};

/** Throws when a measurement saw anything but 2xx answers (the row keeps what was measured). */
function check(result, what) {
  const parts = [result, result.warmup].filter(Boolean);
  const non2xx = parts.reduce((n, p) => n + (p.non2xx ?? 0), 0);
  const errors = parts.reduce((n, p) => n + (p.errors ?? 0) + (p.timeouts ?? 0), 0);
  if (non2xx > 0 || errors > 0) {
    const statuses = parts.map((p) => JSON.stringify(p.statusCounts)).join(' / ');
    const first = parts.find((p) => p.firstError)?.firstError;
    throw new Error(
      `${what}: ${non2xx} non-2xx answers and ${errors} errors (statuses ${statuses}${first ? `, first error: ${first}` : ''})`,
    );
  }
  return result;
}

function machineBusySeconds() {
  const [cpu] = fs.readFileSync('/proc/stat', 'utf8').split('\n');
  const f = (cpu ?? '').trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy = all but idle and iowait.
  const busy = f.slice(0, 8).reduce((a, b) => a + b, 0) - (f[3] ?? 0) - (f[4] ?? 0);
  return busy / 100;
}

/** Measures one phase: the server's CPU and RSS, and CPU the rest of the machine spent. */
async function measured(servers, run) {
  const [main, ...aux] = servers;
  const watch = watchProcess(main.pid);
  const auxWatch = aux.map((s) => watchProcess(s.pid));
  const self0 = process.cpuUsage();
  const busy0 = machineBusySeconds();
  const t0 = performance.now();
  let result;
  try {
    result = await run();
  } finally {
    const seconds = (performance.now() - t0) / 1000;
    const self = process.cpuUsage(self0);
    const mine = watch.stop();
    const auxCores = auxWatch.reduce((n, w) => n + w.stop().cpuCores, 0);
    const benchCores = (self.user + self.system) / 1e6 / seconds;
    const otherCores =
      (machineBusySeconds() - busy0) / seconds - mine.cpuCores - auxCores - benchCores;
    result = { ...result, ...mine, auxCores, benchCores, otherCores: Math.max(0, otherCores) };
  }
  return result;
}

/**
 * Starts a scenario's servers, measures it and stops them. Round 1 measures everything the
 * scenario measures; a later round only the closed loop and concurrency 1, for the medians.
 */
async function runScenario(scenario, round = 1) {
  const row = { id: scenario.id, group: scenario.group, label: scenario.label };
  if (scenario.stored) row.stored = scenario.stored;
  if (scenario.profiled && opts.cpuProf) row.profiled = true;
  const shortWarmup = Math.min(opts.warmup, 2);
  let started;
  const owned = [];
  const deferred = [];
  const scenarioCtx = {
    ...ctx,
    own: (server) => owned.push(server),
    defer: (fn) => deferred.push(fn),
    profileFile: row.profiled
      ? path.join(profileDir, `${scenario.id}-${stamp}.cpuprofile`)
      : undefined,
  };
  let peakUnderLoad = 0;
  const note = (result) => {
    peakUnderLoad = Math.max(peakUnderLoad, result.peakRssMb ?? 0);
    return result;
  };
  try {
    started = await scenario.start(scenarioCtx);
    const { servers, target } = started;
    const main = servers[0];
    if (scenario.measure.closed) {
      log(
        `  closed loop: ${opts.warmup} s warm-up, ${opts.duration} s × ${opts.connections} connections`,
      );
      const load = { connections: opts.connections };
      check(await closedLoop(target, { ...load, durationS: opts.warmup }), 'closed-loop warm-up');
      row.closed = note(
        await measured(servers, () => closedLoop(target, { ...load, durationS: opts.duration })),
      );
      check(row.closed, 'closed loop');
      log(`    ${Math.round(row.closed.rps)} req/s, p99 ${row.closed.p99Ms} ms`);
    }
    if (scenario.measure.open && round === 1) {
      row.open = [];
      for (const rate of opts.rates) {
        log(`  open loop: ${rate}/s for ${opts.duration} s`);
        const result = note(
          await measured(servers, () =>
            openLoop(target, {
              rate,
              durationS: opts.duration,
              warmupS: shortWarmup,
              sockets: opts.sockets,
            }),
          ),
        );
        row.open.push(result);
        check(result, `open loop ${rate}/s`);
        log(
          `    achieved ${Math.round(result.achievedRps)}/s, p50 ${result.p50Ms.toFixed(2)} ms, p99 ${result.p99Ms.toFixed(2)} ms, dropped ${result.dropped + result.unanswered}`,
        );
      }
    }
    if (scenario.measure.sequential) {
      log(`  concurrency 1: ${opts.duration} s`);
      row.sequential = note(
        await measured(servers, () =>
          sequential(target, { durationS: opts.duration, warmupS: opts.settle }),
        ),
      );
      check(row.sequential, 'concurrency 1');
      log(
        `    p50 ${row.sequential.p50Ms.toFixed(3)} ms, p99 ${row.sequential.p99Ms.toFixed(3)} ms`,
      );
    }
    row.peakRssMb = (memoryOf(main.pid)?.hwmKb ?? Number.NaN) / 1024;
    row.peakRssUnderLoadMb = peakUnderLoad;
  } catch (error) {
    row.error = error instanceof Error ? error.message : String(error);
    log(`  FAILED: ${row.error}`);
  } finally {
    // The measured server first (a proxy before its upstream), then the rest, newest first.
    const order = [...new Set([...(started?.servers ?? []), ...owned.reverse()])];
    for (const server of order) {
      const exit = await server.stop();
      if (exit.code !== 0 && exit.signal !== 'SIGTERM' && !row.error) {
        log(`  note: ${server.name} exited with ${exit.signal ?? exit.code}`);
      }
    }
    for (const fn of deferred) fn();
  }
  if (row.profiled) row.profile = summariseProfileFile(scenarioCtx.profileFile, scenario);
  row.rounds = [measuredRound(row)];
  return row;
}

/** What one round measured of a scenario: the figures the tables and targets take medians of. */
function measuredRound(row) {
  return {
    closed: row.closed,
    sequential: row.sequential,
    peakRssMb: row.peakRssMb,
    peakRssUnderLoadMb: row.peakRssUnderLoadMb,
  };
}

function summariseProfileFile(file, scenario) {
  if (!fs.existsSync(file)) {
    log(`  no profile at ${file} (did plauder exit cleanly?)`);
    return undefined;
  }
  const summary = summariseProfile(JSON.parse(fs.readFileSync(file, 'utf8')), 15);
  const text = formatSummary(summary);
  fs.writeFileSync(file.replace(/\.cpuprofile$/, '.md'), `# ${path.basename(file)}\n\n${text}\n`);
  log(`\nCPU profile of ${scenario.label}: ${path.relative(root, file)}\n\n${text}`);
  return { file: path.relative(root, file), ...summary };
}

const startedAt = new Date();
const loadBefore = os.loadavg().map((l) => l.toFixed(2));
log(
  `bench: ${selected.length} scenario(s), ${opts.duration} s per measurement${opts.quick ? ' (quick)' : ''}; load average ${loadBefore.join(' ')}`,
);
if (opts.cpuProf) fs.mkdirSync(profileDir, { recursive: true });
const rows = [];
for (const scenario of selected) {
  log(
    `\n▶ ${scenario.id}: ${scenario.label}${opts.rounds > 1 ? ` (round 1 of ${opts.rounds})` : ''}`,
  );
  rows.push(await runScenario(scenario));
}
// Later rounds: every scenario again (a profiled one only once), in reverse order every
// other round, so that no scenario always runs right after the same one.
for (let round = 2; round <= opts.rounds; round++) {
  const order = round % 2 === 0 ? [...selected].reverse() : selected;
  for (const scenario of order) {
    const row = rows.find((r) => r.id === scenario.id);
    const repeats = scenario.measure.closed || scenario.measure.sequential;
    if (!row || row.error || row.profiled || !repeats) continue;
    log(`\n▶ ${scenario.id} (round ${round} of ${opts.rounds})`);
    const again = await runScenario(scenario, round);
    if (again.error) row.error = `round ${round}: ${again.error}`;
    else row.rounds.push(measuredRound(again));
  }
}
for (const row of rows) Object.assign(row, medianOfRounds(row.rounds));

const targets = [...targetsOfRows(rows, opts.rounds), await streaming()];

/**
 * The streaming bench, once, after the scenarios (it starts its own servers): for the
 * streaming target, unless the run is a selection (--only), profiled or --no-stream.
 */
async function streaming() {
  if (values.only || opts.cpuProf || values['no-stream']) return streamTarget(undefined);
  log('\n▶ streaming: bench/stream/stream-bench.mjs');
  const args = ['--duration', String(opts.duration), '--warmup', String(Math.min(opts.warmup, 2))];
  args.push('--settle', String(opts.settle), '--out', values.out);
  if (values['node-args'] !== undefined) args.push(`--node-args=${values['node-args']}`);
  try {
    await runNode(path.join(root, 'bench/stream/stream-bench.mjs'), args, process.env);
  } catch (error) {
    log(`bench: the streaming bench FAILED: ${error.message}`);
    process.exitCode = 1;
  }
  const file = path.join(values.out, 'stream-latest.json');
  const fresh = fs.existsSync(file) && fs.statSync(file).mtimeMs >= startedAt.getTime();
  return streamTarget(fresh ? JSON.parse(fs.readFileSync(file, 'utf8')) : undefined);
}
const meta = {
  date: startedAt.toISOString(),
  finished: new Date().toISOString(),
  command: `node bench/run.mjs ${process.argv.slice(2).join(' ')}`.trim(),
  node: process.version,
  machine: {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    memGb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
  },
  loadBefore,
  loadAfter: os.loadavg().map((l) => l.toFixed(2)),
  options: opts,
};
const markdown = renderMarkdown({ meta, rows, targets });
fs.mkdirSync(values.out, { recursive: true });
fs.writeFileSync(path.join(values.out, 'latest.md'), `${markdown}\n`);
fs.writeFileSync(
  path.join(values.out, 'latest.json'),
  `${JSON.stringify({ meta, rows, targets }, null, 2)}\n`,
);
process.stdout.write(`\n${markdown}\n`);
log(`bench: wrote ${path.relative(root, path.join(values.out, 'latest.md'))} and latest.json`);
if (rows.some((r) => r.error)) {
  log(`bench: ${rows.filter((r) => r.error).length} scenario(s) FAILED`);
  process.exitCode = 1;
}
