#!/usr/bin/env node
/**
 * Renders a run's report again from its JSON with the current report code (targets,
 * tables), e.g. after a target's definition changed: reads `<dir>/latest.json`, writes
 * `<dir>/latest.md` and the JSON's `targets`. No measurement is repeated.
 *
 *   node bench/tools/rerender.mjs [bench/results]
 */
import fs from 'node:fs';
import path from 'node:path';
import { renderMarkdown, targetsOfRows } from '../lib/report.mjs';

const dir = path.resolve(process.argv[2] ?? 'bench/results');
const file = path.join(dir, 'latest.json');
const { meta, rows, targets: before } = JSON.parse(fs.readFileSync(file, 'utf8'));
// The streaming target comes from another script's run: kept as it was measured.
const targets = [
  ...targetsOfRows(rows, meta.options.rounds),
  ...before.filter((t) => t.id === 'stream-ttft'),
];
const markdown = renderMarkdown({ meta, rows, targets });
fs.writeFileSync(path.join(dir, 'latest.md'), `${markdown}\n`);
fs.writeFileSync(file, `${JSON.stringify({ meta, rows, targets }, null, 2)}\n`);
process.stdout.write(
  `${targets.map((t) => `${t.result}: ${t.target}: ${t.measured}`).join('\n')}\n`,
);
