#!/usr/bin/env node
/**
 * What one request of the `plauder-session` scenario must do, part by part, measured
 * in-process without HTTP: the CPU a request needs whatever the server around it does.
 * With bare Fastify's CPU per request from the same machine it bounds the throughput
 * ratio any implementation of this design can reach (bench/README.md, "The floor").
 *
 *   node bench/tools/parts.mjs [--calls 20000] [--json]      (after `npm run build`)
 *
 * Each part runs `--calls` times after 2 000 warm-up calls, one at a time (no batching,
 * which only the server's group commit could add); the median of 5 rounds is reported.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../dist/config/config.js';
import { createBuiltinCore } from '../../dist/core/builtin/create-builtin-core.js';
import { createServices } from '../../dist/services.js';
import { createStore } from '../../dist/storage/create-database.js';
import { loadSecret } from '../../dist/storage/secret.js';
import { conversation, MESSAGE } from '../lib/conversation.mjs';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '20000' },
    json: { type: 'boolean', default: false },
  },
});
const calls = Number(values.calls);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plauder-parts-'));
const config = loadConfig({
  PLAUDER_DATABASE_URL: `sqlite:${path.join(dir, 'parts.db')}`,
  PLAUDER_SECRET: Buffer.alloc(32, 7).toString('base64'),
  PLAUDER_PLANS: 'bench=1000000000',
});
const store = await createStore(config.database);
const services = createServices(config, store, loadSecret(config.secret), Date.now);
const core = createBuiltinCore();
const signal = new AbortController().signal;

try {
  const issued = await services.keys.create({ name: 'parts', plan: 'bench' });
  const { id: keyId, key } = issued.value;
  const now = Date.now();
  // A session at the full window, built by the core itself, as the bench seeds it.
  const history = await conversation(config.sessionWindow, core);
  for (const turn of history) {
    await (await services.sessions.open(keyId, 'parts-0', now)).record(turn, now);
  }
  const body = Buffer.from(JSON.stringify({ message: MESSAGE, sessionId: 'parts-0' }));

  const parts = [
    ['parse the JSON body', () => JSON.parse(body.toString('utf8'))],
    [
      'authenticate: check the key (CRC), hash it (SHA-256), read it',
      () => services.keys.authenticate(`Bearer ${key}`),
    ],
    [
      'reserve the quota (one write, committed alone)',
      () =>
        services.quota.reserve(
          { id: keyId, name: 'bench', plan: 'standard', limit: 1e9, minuteLimit: undefined },
          now,
        ),
    ],
    [
      'open the session: read, decrypt, parse the 20-turn window',
      () => services.sessions.open(keyId, 'parts-0', now),
    ],
    [
      'built-in core: reply with the 20-turn history',
      () => core.reply({ language: 'de', message: MESSAGE, history, signal }),
    ],
    [
      'store the turn: seal the window, write it (committed alone)',
      async () => {
        const session = await services.sessions.open(keyId, 'parts-1', now);
        return session.record(history[0], now);
      },
      // Opening parts-1 (one short window) is subtracted below.
      () => services.sessions.open(keyId, 'parts-1', now),
    ],
  ];

  const rows = [];
  for (const [name, fn, baseline] of parts) {
    const micros = await median(fn);
    const minus = baseline ? await median(baseline) : 0;
    rows.push({ part: name, micros: micros - minus });
  }
  const total = rows.reduce((sum, row) => sum + row.micros, 0);
  // Not part of the sum: the same reservation for a plan with a per-minute limit (one
  // statement either way; the minute is a column of the same row).
  const withMinute = await median(() =>
    services.quota.reserve(
      { id: keyId, name: 'bench', plan: 'standard', limit: 1e9, minuteLimit: 1e9 },
      now,
    ),
  );
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ node: process.version, calls, rows, totalMicros: total, reserveWithMinuteMicros: withMinute })}\n`,
    );
  } else {
    process.stdout.write(
      `Parts of one plauder-session request, in-process (${process.version}, ${calls} calls each, median of 5 rounds)\n\n`,
    );
    process.stdout.write('| part | µs |\n|---|---:|\n');
    for (const row of rows) process.stdout.write(`| ${row.part} | ${row.micros.toFixed(1)} |\n`);
    process.stdout.write(`| **sum** | **${total.toFixed(1)}** |\n`);
    process.stdout.write(
      `\nreserve the quota for a plan with a per-minute limit too: ${withMinute.toFixed(1)} µs\n`,
    );
  }
} finally {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Median over 5 rounds of the mean µs per call, calls made one after the other. */
async function median(fn) {
  for (let i = 0; i < 2000; i++) await fn();
  const rounds = [];
  for (let round = 0; round < 5; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) await fn();
    rounds.push(Number(process.hrtime.bigint() - started) / calls / 1000);
  }
  rounds.sort((a, b) => a - b);
  return rounds[2];
}
