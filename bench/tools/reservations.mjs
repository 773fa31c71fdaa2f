#!/usr/bin/env node
/**
 * CPU per quota reservation on SQLite, in process, with a number of reservations of one key
 * in flight at a time (as the closed loop's 50 connections of one key make them): the
 * reservation alone, without HTTP or a core. Run it on two checkouts one after the other,
 * alternating, to compare them (bench/README.md, "Reservations of one key in one batch").
 *
 *   node bench/tools/reservations.mjs <checkout> [--in-flight 50] [--rounds 5] [--batches 400]
 *
 * `<checkout>` is a built tree (its dist/): this one, or an earlier commit checked out with
 * `git worktree add` (and node_modules linked). Prints the CPU µs per reservation of each
 * round (process CPU time, user + system), after one warm-up round.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: {
    'in-flight': { type: 'string', default: '50' },
    rounds: { type: 'string', default: '5' },
    batches: { type: 'string', default: '400' },
  },
  allowPositionals: true,
});
const root = path.resolve(positionals[0] ?? '.');
const inFlight = Number(values['in-flight']);
const rounds = Number(values.rounds);
const batches = Number(values.batches);

const { loadConfig } = await import(`${root}/dist/config/config.js`);
const { createServices } = await import(`${root}/dist/services.js`);
const { createStore } = await import(`${root}/dist/storage/create-database.js`);
const { loadSecret } = await import(`${root}/dist/storage/secret.js`);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plauder-reservations-'));
const config = loadConfig({
  PLAUDER_DATABASE_URL: `sqlite:${path.join(dir, 'reservations.db')}`,
  PLAUDER_SECRET: Buffer.alloc(32, 7).toString('base64'),
  PLAUDER_PLANS: 'bench=1000000000',
});
const store = await createStore(config.database);
try {
  const services = createServices(config, store, loadSecret(config.secret), Date.now);
  const issued = await services.keys.create({ name: 'reservations', plan: 'bench' });
  const key = {
    id: issued.value.id,
    name: 'bench',
    plan: 'bench',
    limit: 1e9,
    minuteLimit: undefined,
  };
  const now = Date.now();

  /** `batches` times `inFlight` reservations at once; CPU µs per reservation. */
  const round = async () => {
    const started = process.cpuUsage();
    for (let b = 0; b < batches; b++) {
      const pending = [];
      for (let i = 0; i < inFlight; i++) pending.push(services.quota.reserve(key, now));
      for (const reservation of await Promise.all(pending)) {
        if (!reservation.ok) throw new Error('a reservation was refused');
      }
    }
    const used = process.cpuUsage(started);
    return (used.user + used.system) / (batches * inFlight);
  };

  await round();
  const figures = [];
  for (let r = 0; r < rounds; r++) figures.push(await round());
  const expected = (rounds + 1) * batches * inFlight;
  const counted = await services.usage.used(key.id, services.quota.monthOf(now).month);
  if (counted !== expected) throw new Error(`counted ${counted} reservations, made ${expected}`);
  process.stdout.write(
    `${JSON.stringify({ root, inFlight, batches, cpuUsPerReservation: figures.map((f) => Number(f.toFixed(2))) })}\n`,
  );
} finally {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
