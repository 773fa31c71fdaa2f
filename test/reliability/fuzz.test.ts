/**
 * Generated requests (fast-check; 10 000 by default, see TOTAL) against the real app in its
 * own process on loopback, over 32 keep-alive connections: every answer must be one the contract allows
 * for that request (support/contract-oracle.ts), with the envelope, `Cache-Control:
 * no-store`, an `X-Request-Id`, no CORS headers and no internals; the only 500s are the
 * ones a deliberately failing core causes; the server's heap does not grow.
 * A failure prints the seed: `FUZZ_SEED=<seed>` replays the same requests.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from '../helpers/test-database.js';
import {
  allowedOutcomes,
  commonProblems,
  describeBody,
  type FuzzKeys,
  isMalformed,
} from './support/contract-oracle.js';
import { describeRequest, fuzzRequest } from './support/fuzz-requests.js';
import { createHttpClient, type RawRequest, type RawResponse } from './support/http-client.js';
import { mb } from './support/process-stats.js';

/**
 * 10 000 on SQLite, 5 000 on PostgreSQL by default; `PLAUDER_FUZZ_REQUESTS=100000` for a
 * long run (in both projects). The default still reaches every kind of answer the contract
 * has many times: in a 10 000 run the rarest (`400 head`, `401 head`, `200 head`,
 * `soft:message_too_long`) came 12 to 40 times, every other kind 78 to 2 500 times, and the
 * list of expected answers below is asserted on every run; more requests repeat the same
 * kinds with other values. The PostgreSQL project runs the same surface with half of them:
 * the contract under test is the HTTP layer's, and the database's share is the same few
 * statements. The heap check compares the first tenth with the end in every run.
 */
const TOTAL =
  Number(process.env.PLAUDER_FUZZ_REQUESTS) || (TEST_DIALECT === 'postgres' ? 5_000 : 10_000);
/** Requests per fast-check sample (seed + chunk number); the warm-up is the first tenth. */
const CHUNK = Math.min(2_000, Math.max(100, Math.ceil(TOTAL / 10)));
const CONNECTIONS = 32;
const MARKER = 'FUZZ-FAIL-MARKER-7c1e';
const FIXTURE = fileURLToPath(new URL('./fixtures/fuzz-server.mjs', import.meta.url));
const SEED = Number(process.env.FUZZ_SEED) || Math.floor(Math.random() * 2 ** 31);

interface Memory {
  memory: NodeJS.MemoryUsage;
  /** CPU time the server process used so far. */
  cpuMs: number;
  logLines: number;
  logLeaks: number;
  leakSamples: string[];
}

let database: TestDatabase;
let child: ChildProcess;
let lines: Interface;
let url: string;
let keys: FuzzKeys;
const nextLine: Array<(line: string) => void> = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith('PLAUDER_')) env[name] = value;
  }
  child = spawn(process.execPath, ['--expose-gc', FIXTURE], {
    env: {
      ...env,
      ...database.env,
      PLAUDER_PLANS: 'standard=1000,plus=5000,huge=100000000,tiny=1',
      PLAUDER_LOG_LEVEL: 'info',
      FUZZ_FAIL_MARKER: MARKER,
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  lines.on('line', (line) => nextLine.shift()?.(line));
  const ready = JSON.parse(await readLine()) as { url: string; keys: FuzzKeys };
  url = ready.url;
  keys = ready.keys;
}, 30_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  await database?.drop();
});

function readLine(): Promise<string> {
  return new Promise((resolve) => nextLine.push(resolve));
}

async function memory(): Promise<Memory> {
  const answer = readLine();
  child.stdin?.write('mem\n');
  return JSON.parse(await answer) as Memory;
}

/** The problems with one answer, or undefined when it is one the contract allows. */
function judge(request: RawRequest, res: RawResponse): { problems: string[]; outcome: string } {
  const problems = commonProblems(request, res);
  let body = '?';
  try {
    body = describeBody(request, res);
  } catch (error) {
    problems.push((error as Error).message);
  }
  const allowed = allowedOutcomes(request, keys, MARKER);
  const fits = allowed.some(
    (o) => o.status === res.status && (o.body === 'any' || body === 'head' || o.body === body),
  );
  if (!fits) {
    const expected = allowed.map((o) => `${o.status} ${o.body}`).join(' | ');
    problems.push(`answer ${res.status} ${body}, the contract allows ${expected}`);
  }
  return { problems, outcome: `${res.status} ${body}` };
}

async function pool<T>(items: T[], workers: number, run: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < items.length) await run(items[next++] as T);
    }),
  );
}

describe('fuzzing the HTTP surface', () => {
  it(`answers ${TOTAL} generated requests only as the contract allows, with a steady heap`, async () => {
    const client = createHttpClient(url, CONNECTIONS);
    const arbitrary = fuzzRequest(keys, MARKER);
    const outcomes = new Map<string, number>();
    const violations: string[] = [];
    let sent = 0;
    let resets = 0;
    let deliberate500 = 0;
    const start = await memory();
    let warm: Memory | undefined;
    const started = Date.now();
    const cpuBefore = process.cpuUsage();

    for (let chunk = 0; sent < TOTAL; chunk++) {
      const requests = fc.sample(arbitrary, {
        numRuns: Math.min(CHUNK, TOTAL - sent),
        seed: SEED + chunk,
      });
      await pool(requests, CONNECTIONS, async (request) => {
        sent++;
        let res: RawResponse;
        try {
          res = await client.send(request, 30_000);
        } catch (error) {
          // The parser refused the request and closed the connection before the answer arrived.
          if (isMalformed(request)) resets++;
          else violations.push(`${describeRequest(request)}\n  -> ${(error as Error).message}`);
          return;
        }
        const { problems, outcome } = judge(request, res);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
        if (res.status === 500) deliberate500++;
        if (problems.length > 0 && violations.length < 20) {
          violations.push(
            `${describeRequest(request)}\n  -> ${res.status} ${res.text.slice(0, 300)}\n  ${problems.join('; ')}`,
          );
        }
      });
      if (warm === undefined && sent >= TOTAL / 10) warm = await memory();
    }
    const seconds = (Date.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const clientCpuS = (cpu.user + cpu.system) / 1e6;
    client.close();
    const end = await memory();
    const base = warm ?? start;

    console.log(
      `[fuzz] ${sent} requests in ${seconds.toFixed(1)} s (${Math.round(sent / seconds)}/s, ${CONNECTIONS} connections, seed ${SEED}); ` +
        `${violations.length} violations, ${deliberate500} deliberate 500s, ${resets} connections closed by the parser; ` +
        `server heap ${mb(start.memory.heapUsed)} → ${mb(base.memory.heapUsed)} (after 10%) → ${mb(end.memory.heapUsed)}, ` +
        `rss ${mb(start.memory.rss)} → ${mb(base.memory.rss)} → ${mb(end.memory.rss)}; ` +
        `${end.logLines} log lines, ${end.logLeaks} with a key; ` +
        `CPU: server ${((end.cpuMs - start.cpuMs) / 1000).toFixed(1)} s, test process ${clientCpuS.toFixed(1)} s`,
    );
    console.log(
      `[fuzz] answers: ${[...outcomes]
        .sort((a, b) => b[1] - a[1])
        .map(([o, n]) => `${o} ×${n}`)
        .join(', ')}`,
    );

    if (end.leakSamples.length > 0)
      console.log(`[fuzz] log lines with a key:\n${end.leakSamples.join('\n')}`);
    expect(violations, `seed ${SEED}:\n${violations.join('\n')}`).toEqual([]);
    expect(sent).toBe(TOTAL);
    expect(end.logLeaks, end.leakSamples.join('\n')).toBe(0);
    // The generators reach the contract's answers, and the marker's 500s happen.
    const seen = [...outcomes.keys()].join(' ');
    for (const expected of [
      '200 reply',
      '200 soft:body_invalid',
      '200 soft:message_missing',
      '200 soft:message_invalid',
      '200 soft:message_too_long',
      '200 soft:session_id_invalid',
      '200 soft:plan_inactive',
      '401 error:invalid_api_key',
      '413 error:payload_too_large',
      '429 error:quota_exceeded',
      '500 error:internal_error',
      '404 error:not_found',
      '404 error:session_not_found',
      '400 error:bad_request',
      '200 usage',
      '200 session',
      '204 empty',
    ]) {
      expect(seen).toContain(expected);
    }
    // After the warm-up (JIT, caches, pools), the other 90 % leave the heap where it was.
    expect(end.memory.heapUsed - base.memory.heapUsed).toBeLessThan(16 * 1024 * 1024);
  }, 150_000);
});
