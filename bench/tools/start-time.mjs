#!/usr/bin/env node
/**
 * Time to ready: from spawning a command (default `npm start`) to the first 200 of
 * `GET /healthz`, on a fresh SQLite database each run; prints each run and the median.
 *
 *   npm run build && node bench/tools/start-time.mjs [--runs 7] [-- command args...]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '../lib/children.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { values, positionals } = parseArgs({
  options: { runs: { type: 'string', default: '7' } },
  allowPositionals: true,
});
const [command = 'npm', ...commandArgs] = positionals.length > 0 ? positionals : ['npm', 'start'];

const times = [];
for (let run = 0; run < Number(values.runs); run++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plauder-start-'));
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command, commandArgs, {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      PLAUDER_DATABASE_URL: `sqlite:${path.join(dir, 'plauder.db')}`,
      PLAUDER_LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
    detached: true,
  });
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  times.push(Math.round(performance.now() - started));
  process.kill(-child.pid, 'SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  fs.rmSync(dir, { recursive: true, force: true });
}
const sorted = [...times].sort((a, b) => a - b);
process.stdout.write(
  `${command} ${commandArgs.join(' ')}: ${times.join(', ')} ms; median ${sorted[Math.floor(sorted.length / 2)]} ms\n`,
);
