/**
 * Summarises a V8 .cpuprofile (from `node --cpu-prof`): top functions by self time, top
 * files and top packages by self time, and the time charged to plauder's own functions
 * (each sample goes to the innermost dist/ frame on its stack, so the SQLite, crypto and
 * framework work a plauder function causes counts for it). Self time of a node = the
 * sampling intervals (timeDeltas) in which it was the innermost frame.
 *
 *   node bench/tools/summarise-profile.mjs <file.cpuprofile> [--top 15] [--json]
 *
 * Percentages are of all samples; "(idle)" is time the process waited for work, so the
 * "% busy" column (share of non-idle time) is the one to compare between functions.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function summariseProfile(profile, top = 15) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  const selfUs = new Map();
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    // timeDeltas[i] is the time before sample i; attribute the following interval to it.
    const delta = timeDeltas[i + 1] ?? 0;
    selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + Math.max(0, delta));
  }
  let total = 0;
  let idle = 0;
  const functions = new Map();
  const files = new Map();
  const packages = new Map();
  const plauderSites = new Map();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    total += us;
    if (frame.functionName === '(idle)') idle += us;
    const file = shortFile(frame.url);
    const fn =
      `${frame.functionName || '(anonymous)'} ${file ? `${file}:${frame.lineNumber + 1}` : ''}`.trim();
    add(functions, fn, us);
    add(files, file || frame.functionName, us);
    add(packages, packageOf(frame), us);
    const site = innermostPlauderFrame(id, byId, parentOf);
    if (site) add(plauderSites, site, us);
  }
  const busy = total - idle;
  const rank = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({
        name,
        ms: us / 1000,
        pctTotal: (100 * us) / total,
        pctBusy: name.startsWith('(idle)') ? null : (100 * us) / busy,
      }));
  return {
    totalMs: total / 1000,
    idleMs: idle / 1000,
    samples: samples.length,
    functions: rank(functions),
    files: rank(files),
    packages: rank(packages),
    plauder: rank(plauderSites),
  };
}

/** The innermost frame of plauder's own code (dist/) on the sample's stack, if any. */
function innermostPlauderFrame(id, byId, parentOf) {
  for (let at = id; at !== undefined; at = parentOf.get(at)) {
    const frame = byId.get(at)?.callFrame;
    const file = shortFile(frame?.url);
    if (file.startsWith('dist/'))
      return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
  }
  return undefined;
}

function add(map, key, us) {
  map.set(key, (map.get(key) ?? 0) + us);
}

function shortFile(url) {
  if (!url) return '';
  let file = url.startsWith('file://') ? fileURLToPath(url) : url;
  if (file.startsWith(root)) file = path.relative(root, file);
  const nm = file.lastIndexOf('node_modules/');
  return nm >= 0 ? file.slice(nm + 'node_modules/'.length) : file;
}

function packageOf(frame) {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native V8 / C++)';
  if (url.startsWith('node:')) return 'node: (Node.js core)';
  const file = shortFile(url);
  if (file.startsWith('dist/')) return `plauder ${file.split('/').slice(0, 2).join('/')}`;
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 'node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? file);
  }
  return file;
}

export function formatSummary(summary) {
  const lines = [];
  const row = (e) =>
    `| ${e.name.replaceAll('|', '\\|')} | ${e.ms.toFixed(0)} | ${e.pctTotal.toFixed(1)} % | ${e.pctBusy === null ? '' : `${e.pctBusy.toFixed(1)} %`} |`;
  const section = (title, entries) => {
    lines.push(`### ${title}`, '', '| name | self ms | % total | % busy |', '|---|---:|---:|---:|');
    lines.push(...entries.map(row), '');
  };
  lines.push(
    `${summary.samples} samples, ${summary.totalMs.toFixed(0)} ms profiled, ${((100 * summary.idleMs) / summary.totalMs).toFixed(1)} % idle.`,
    '',
  );
  section('Top functions by self time', summary.functions);
  section('Top files by self time', summary.files);
  section('Top packages by self time', summary.packages);
  section(
    'Time by the innermost plauder function on the stack (its own time plus the library and native calls it makes)',
    summary.plauder,
  );
  return lines.join('\n');
}

if (fileURLToPath(import.meta.url) === path.resolve(process.argv[1] ?? '')) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '15' }, json: { type: 'boolean', default: false } },
  });
  const file = positionals[0];
  if (!file) {
    process.stderr.write(
      'usage: node bench/tools/summarise-profile.mjs <file.cpuprofile> [--top 15] [--json]\n',
    );
    process.exit(2);
  }
  const summary = summariseProfile(JSON.parse(fs.readFileSync(file, 'utf8')), Number(values.top));
  process.stdout.write(
    values.json ? `${JSON.stringify(summary, null, 2)}\n` : `${formatSummary(summary)}\n`,
  );
}
