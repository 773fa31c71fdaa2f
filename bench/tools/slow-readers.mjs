#!/usr/bin/env node
/**
 * Many clients that never read a large streamed reply, against the built server (dist/)
 * with the `openai` core in front of a real upstream process (test/fixtures/openai-upstream.mjs,
 * which writes as fast as its socket takes). One run, three phases, the same probe in each:
 *
 * 1. no slow readers: another key's probe (one plain /api/chat turn after the other) and
 *    plauder's RSS;
 * 2. READERS non-reading clients, each asking a ~REPLY_MB streamed reply (plauder's stall
 *    timeout is set past the phase, so none is cut off): the probe runs while they start,
 *    and again once every one of them is under way, with plauder's RSS and its peak;
 * 3. the slow clients gone: plauder's RSS once their turns have ended.
 *
 *   npm run bench:slow-readers -- [--readers 600] [--reply-mb 3.5] [--probes 200]
 *     [--cli <another build>/dist/cli/main.js]
 *
 * The slow readers are spread over as many keys as the shipped cap of concurrent turns per
 * key (16, README "Concurrent turns per key") needs for all of them to run at once.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    readers: { type: 'string', default: '600' },
    'reply-mb': { type: 'string', default: '3.5' },
    probes: { type: 'string', default: '200' },
    // Another build's CLI (e.g. an earlier commit's dist/cli/main.js), for a before / after.
    cli: { type: 'string' },
  },
});
const READERS = Number(values.readers);
const PIECE_CHARS = 2000;
const PIECES = Math.round((Number(values['reply-mb']) * 1_000_000) / PIECE_CHARS);
const PROBES = Number(values.probes);
/** The shipped PLAUDER_KEY_CONCURRENCY: the readers of one key. */
const READERS_PER_KEY = 16;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = values.cli ? path.resolve(values.cli) : path.join(root, 'dist/cli/main.js');
const dir = mkdtempSync(path.join(tmpdir(), 'plauder-slow-readers-'));

const upstream = spawn(process.execPath, [path.join(root, 'test/fixtures/openai-upstream.mjs')], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const upstreamPort = await new Promise((resolve) => {
  let text = '';
  upstream.stdout.on('data', (chunk) => {
    text += chunk;
    if (text.includes('\n')) resolve(Number(text.split('\n')[0]));
  });
});
const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;

const port = 3800 + Math.floor(Math.random() * 90);
const env = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('PLAUDER_')),
  ),
  PORT: String(port),
  PLAUDER_DATABASE_URL: `sqlite:${path.join(dir, 'slow.db')}`,
  PLAUDER_CORE: 'openai',
  PLAUDER_OPENAI_BASE_URL: `${upstreamUrl}/v1`,
  PLAUDER_OPENAI_MODEL: 'bench',
  PLAUDER_OPENAI_MAX_CONNECTIONS: String(READERS + 64),
  PLAUDER_PLANS: 'standard=1000000000',
  PLAUDER_STREAM_STALL_TIMEOUT: '10m',
  PLAUDER_CORE_TIMEOUT: '10m',
  PLAUDER_OPENAI_TOKEN_GAP_TIMEOUT: '10m',
  // 600 streams start at once on a busy machine: a slow first token is not what is measured.
  PLAUDER_OPENAI_FIRST_TOKEN_TIMEOUT: '10m',
  PLAUDER_OPENAI_MAX_RETRIES: '0',
  PLAUDER_LOG_LEVEL: 'warn',
};
const makeKey = (name) =>
  JSON.parse(
    spawnSync(
      process.execPath,
      [cli, 'keys', 'create', '--name', name, '--plan', 'standard', '--json'],
      {
        env,
        encoding: 'utf8',
      },
    ).stdout,
  ).key;
const slowKeys = Array.from({ length: Math.ceil(READERS / READERS_PER_KEY) }, (_, i) =>
  makeKey(`slow-${i}`),
);
const probeKey = makeKey('probe');
// A full collection on SIGUSR2, so the heap left after the readers is what is still held.
const gcOnSignal = path.join(root, 'test/reliability/fixtures/gc-on-signal.mjs');
const server = spawn(process.execPath, ['--expose-gc', '--import', gcOnSignal, cli, 'serve'], {
  env,
  stdio: ['ignore', 'inherit', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
for (;;) {
  try {
    if ((await fetch(`${base}/healthz`)).ok) break;
  } catch {}
  await sleep(100);
}

const rssMb = () => {
  const status = readFileSync(`/proc/${server.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
};
/**
 * The V8 heap in use (garbage not yet collected included) and the memory outside it that V8
 * knows of (Buffers' bytes), from plauder's own /metrics.
 */
const heapMb = async () => {
  const text = await (await fetch(`${base}/metrics`)).text();
  const metric = (name) =>
    Number(new RegExp(`^plauder_nodejs_${name} (\\S+)`, 'm').exec(text)?.[1] ?? 0) / 1e6;
  return {
    heap: metric('heap_size_used_bytes'),
    total: metric('heap_size_total_bytes'),
    external: metric('external_memory_bytes'),
  };
};
let peakMb = rssMb();
const sampler = setInterval(() => {
  peakMb = Math.max(peakMb, rssMb());
}, 100);

/** PROBES turns one after the other, or (`until`) as many as come before it says stop. */
async function probe(until) {
  const times = [];
  let failures = 0;
  for (let i = 0; until ? !until() : i < PROBES; i++) {
    const started = performance.now();
    const response = await fetch(`${base}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${probeKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: `probe ${i}` }),
    });
    await response.text();
    if (!response.ok) failures++;
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  return { p50: at(0.5), p99: at(0.99), max: times.at(-1), count: times.length, failures };
}

const control = (pathname, body) =>
  fetch(`${upstreamUrl}${pathname}`, { method: 'POST', body: JSON.stringify(body ?? {}) });
const received = async () => (await (await fetch(`${upstreamUrl}/__requests`)).json()).requests;

// 1. No slow readers.
await probe(); // warm-up
const quiet = await probe();
const quietRss = rssMb();
const quietHeap = await heapMb();

// 2. READERS clients that never read.
await control('/__reset');
await control('/__control', {
  responses: Array.from({ length: READERS }, () => ({
    stream: { large: { pieces: PIECES, pieceChars: PIECE_CHARS } },
  })),
});
let settled = false;
const starting = probe(() => settled);
const body = JSON.stringify({ message: 'Erzähl viel', stream: true });
const sockets = Array.from({ length: READERS }, (_, i) => {
  const slowKey = slowKeys[Math.floor(i / READERS_PER_KEY)];
  const socket = net.connect(port, '127.0.0.1');
  socket.pause();
  socket.on('error', () => {});
  socket.write(
    `POST /api/chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${slowKey}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return socket;
});
// Every stream under way, and each upstream either blocked by plauder or done writing.
const settleStarted = performance.now();
for (;;) {
  const requests = (await received()).filter((r) => r.streamedBytes !== undefined);
  const settled = requests.filter((r) => r.waitingForDrain || r.streamEnded);
  if (requests.length >= READERS && settled.length >= READERS) break;
  if (performance.now() - settleStarted > 300_000) {
    console.error(`only ${settled.length} of ${requests.length} streams settled`);
    break;
  }
  await sleep(500);
}
settled = true;
const whileStarting = await starting;
const loadedRss = rssMb();
const loaded = await probe();
const loadedAfterRss = rssMb();
const loadedHeap = await heapMb();
const requests = (await received()).filter((r) => r.streamedBytes !== undefined);
// What the readers hold, without the garbage of their start.
await fullGc();
const heldRss = rssMb();
const heldHeap = await heapMb();
const upstreamMb = requests.reduce((sum, r) => sum + r.streamedBytes, 0) / 1e6;
const ended = requests.filter((r) => r.streamEnded).length;

// 3. The slow clients gone.
for (const socket of sockets) socket.destroy();
for (;;) {
  const open = (await received()).filter(
    (r) => r.streamedBytes !== undefined && !r.abortedAt && !r.streamEnded,
  );
  if (open.length === 0) break;
  await sleep(200);
}
await sleep(2000);
await fullGc();
const afterRss = rssMb();
const afterHeap = await heapMb();
clearInterval(sampler);

const ms = (value) => `${value.toFixed(1)} ms`;
const mb = (value) => `${value.toFixed(0)} MB`;
console.log(
  `\n${READERS} non-reading clients of ${(PIECES * PIECE_CHARS) / 1e6} MB streamed replies, probe: ${PROBES} sequential /api/chat turns of another key\n`,
);
console.log(
  '| phase | plauder RSS | V8 heap used of total / external | probe p50 | probe p99 | probe max | probe failures |',
);
console.log('|---|---|---|---|---|---|---|');
const memory = ({ heap, total, external }) => `${mb(heap)} of ${mb(total)} / ${mb(external)}`;
console.log(
  `| no slow readers | ${mb(quietRss)} | ${memory(quietHeap)} | ${ms(quiet.p50)} | ${ms(quiet.p99)} | ${ms(quiet.max)} | ${quiet.failures} |`,
);
console.log(
  `| ${READERS} slow readers starting (${whileStarting.count} probes) | | | ${ms(whileStarting.p50)} | ${ms(whileStarting.p99)} | ${ms(whileStarting.max)} | ${whileStarting.failures} |`,
);
console.log(
  `| ${READERS} slow readers under way | ${mb(Math.max(loadedRss, loadedAfterRss))} (peak ${mb(peakMb)}) | ${memory(loadedHeap)} | ${ms(loaded.p50)} | ${ms(loaded.p99)} | ${ms(loaded.max)} | ${loaded.failures} |`,
);
console.log(`| under way, after a full GC | ${mb(heldRss)} | ${memory(heldHeap)} | | | | |`);
console.log(`| after they left (full GC) | ${mb(afterRss)} | ${memory(afterHeap)} | | | | |`);
console.log(
  `\nupstream bytes written while the readers read nothing: ${upstreamMb.toFixed(0)} MB of ${((READERS * PIECES * (PIECE_CHARS + 180)) / 1e6).toFixed(0)} MB; upstream requests ${requests.length} (retries included), written whole: ${ended}; ${slowKeys.length} keys of ${READERS_PER_KEY} readers`,
);

server.kill('SIGTERM');
upstream.kill('SIGTERM');
await new Promise((resolve) => server.once('exit', resolve));
rmSync(dir, { recursive: true, force: true });
process.exit(0);

/** Two full collections: the second frees the Buffers' bytes the first found unreachable. */
async function fullGc() {
  server.kill('SIGUSR2');
  await sleep(500);
  server.kill('SIGUSR2');
  await sleep(1000);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
