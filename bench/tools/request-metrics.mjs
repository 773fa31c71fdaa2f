#!/usr/bin/env node
/**
 * The request metrics of one request (route, method, status, duration, the turn's outcome)
 * in process: µs per request for the metrics of one built checkout, so that two builds can be
 * compared alternately (the HTTP bench cannot resolve a microsecond).
 *
 *   node bench/tools/request-metrics.mjs <checkout> [--requests 1000000] [--rounds 5]
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: {
    requests: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '5' },
  },
  allowPositionals: true,
});
const root = path.resolve(positionals[0] ?? '.');
const { createMetrics } = await import(
  pathToFileURL(path.join(root, 'dist/routes/ops/metrics.js')).href
);
const metrics = createMetrics();
const requests = Number(values.requests);
const ROUTES = ['/api/chat', '/api/chat-en', '/v1/chat/completions'];

// Builds before the per-label-set counts took labels objects on every call.
const record =
  typeof metrics.requests.answered === 'function'
    ? (route, status, seconds, outcome) => {
        metrics.requests.answered(route, 'POST', status, seconds);
        metrics.requests.turn(route, outcome);
      }
    : (route, status, seconds, outcome) => {
        metrics.requests.inc({ route, method: 'POST', status });
        metrics.duration.observe({ route }, seconds);
        metrics.chatOutcomes.inc({ endpoint: route, outcome });
      };

const perRequest = [];
for (let round = 0; round < Number(values.rounds); round++) {
  const started = process.cpuUsage();
  for (let i = 0; i < requests; i++) {
    const status = i % 50 === 0 ? 429 : 200;
    record(ROUTES[i % 3], status, (i % 7) / 1000, status === 200 ? 'reply' : 'quota_exceeded');
  }
  const cpu = process.cpuUsage(started);
  perRequest.push((cpu.user + cpu.system) / requests);
  // What a scrape costs is paid once per scrape, not per request.
  await metrics.registry.metrics();
}
const sorted = [...perRequest].sort((a, b) => a - b);
console.log(
  JSON.stringify({
    checkout: root,
    usPerRequest: perRequest.map((us) => +us.toFixed(3)),
    median: +(sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(3),
  }),
);
