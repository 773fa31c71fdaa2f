#!/usr/bin/env node
/**
 * The proxy path's HTTP client alone, in process: the `openai` core's `reply()` (request
 * body, undici pool, attempt timer, abort listener, retry loop, reply checks) against what
 * `servers/bare-proxy.mjs` does (the same body sent with undici's `dispatch`, the reply's
 * JSON parsed), both in front of `servers/upstream.mjs` in a child process whose CPU is not
 * counted. 50 calls in flight; CPU µs per call, --rounds rounds (default 4), the two
 * alternating.
 *
 *   node bench/tools/proxy-client.mjs [--rounds 4] [--calls 20000]
 *
 * Needs dist/ (npm run build).
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../dist/config/config.js';
import { createCore } from '../../dist/core/create-core.js';
import { Cancellation } from '../../dist/util/cancellation.js';
import { installCleanup } from '../lib/children.mjs';
import { MESSAGE } from '../lib/conversation.mjs';
import { startUpstream } from '../lib/scenarios.mjs';
import { createBareCompletion } from '../servers/bare-completion.mjs';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '4' },
    calls: { type: 'string', default: '20000' },
  },
});
const ROUNDS = Number(values.rounds);
const CALLS = Number(values.calls);

installCleanup();
const upstream = await startUpstream({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  own: () => {},
});

const config = loadConfig({
  PLAUDER_CORE: 'openai',
  PLAUDER_OPENAI_BASE_URL: `${upstream.url}/v1`,
  PLAUDER_OPENAI_MODEL: 'bench',
});
const core = await createCore(config.core);
const bareClient = createBareCompletion(`${upstream.url}/v1`);

/** What bare-proxy.mjs does for one request. */
const bare = async () => (await bareClient.complete(MESSAGE)).choices[0].message.content;
/** The openai core, as a turn calls it (each call with a `Cancellation` of its own, as runCore's). */
const openaiCore = () =>
  core.reply({ language: 'de', message: MESSAGE, history: [], signal: new Cancellation() });

/** CPU µs per call of `count` calls, 50 in flight. */
async function measure(call, count) {
  let left = count;
  const start = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (left-- > 0) {
        if (typeof (await call()) !== 'string') throw new Error('no reply');
      }
    }),
  );
  const used = process.cpuUsage(start);
  return (used.user + used.system) / count;
}

const ways = [
  ['bare undici dispatch (proxy-floor)', bare],
  ['openai core reply()', openaiCore],
];
const results = new Map(ways.map(([name]) => [name, []]));
for (const [, call] of ways) await measure(call, CALLS / 4);
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, call] of round % 2 === 0 ? ways : [...ways].reverse()) {
    results.get(name).push(await measure(call, CALLS));
  }
}
const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
console.log(
  `The proxy path's HTTP client in process (${process.version}, ${ROUNDS} rounds of ${CALLS} calls, 50 in flight, medians)\n`,
);
console.log('| client | CPU µs per call | rounds |');
console.log('|---|---:|---|');
for (const [name, list] of results) {
  console.log(
    `| ${name} | ${median(list).toFixed(1)} | ${list.map((v) => v.toFixed(1)).join(', ')} |`,
  );
}
await core.close?.();
await bareClient.close();
await upstream.stop();
