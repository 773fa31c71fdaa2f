/**
 * Crash safety under load, for any database the server can use: the target gives the
 * environment (its `PLAUDER_DATABASE_URL`) and a way to inspect the storage while no server
 * process runs. Rounds of concurrent chat load on one key end in SIGKILL; the next round's
 * server starts on the same database, so the invariants accumulate across crashes:
 *
 *   replies received  <=  count stored  <=  replies received + requests in flight at the kills
 *   count stored      <=  the plan's limit
 */
import { runCliInProcess } from '../../helpers/cli-in-process.js';
import { type ServerProcess, startServerProcess } from '../../helpers/processes.js';
import { chatRequest, createHttpClient, isReply, type RawResponse } from './http-client.js';

export interface CrashTarget {
  /** For the figures, e.g. `sqlite` or `postgres`. */
  readonly name: string;
  /** The server and CLI environment: `PLAUDER_DATABASE_URL`, `PLAUDER_SECRET`, ... */
  readonly env: Record<string, string>;
  /**
   * Runs while no server process is alive (right after a kill, after the last stop):
   * checks the storage's own consistency and reads the stored count.
   */
  inspect(keyId: string, month: string): Promise<StorageState>;
}

export interface StorageState {
  /** `ok`, or what the database's own check reported. */
  readonly integrity: string;
  readonly used: number;
}

/** When a round ends: after this many replies in all rounds, or after this many 429s. */
export type KillPoint = { readonly totalReplies: number } | { readonly quotaExceeded: number };

export interface RoundFigures {
  readonly killPoint: string;
  readonly sent: number;
  readonly replies: number;
  readonly quotaExceeded: number;
  /** Requests sent whose answer had not arrived when the kill was sent. */
  readonly inFlightAtKill: number;
  /** Answers other than a reply or 429 (must stay empty). */
  readonly unexpected: string[];
  readonly ms: number;
  /** From `inspect` right after the kill. */
  readonly storage: StorageState;
  /** `used` of `GET /api/usage` from the restarted server. */
  readonly usedAfterRestart: number;
}

export interface CrashRun {
  readonly keyId: string;
  readonly limit: number;
  readonly rounds: RoundFigures[];
  /** Every reply received, over all rounds. */
  readonly replies: number;
  /** Sum of the requests in flight at each kill. */
  readonly inFlight: number;
  /** After the last restart and a graceful stop. */
  readonly final: StorageState & { readonly usedAfterRestart: number; readonly lastStatus: number };
}

export async function crashUnderLoad(
  target: CrashTarget,
  options: { clients: number; killPoints: readonly KillPoint[] },
): Promise<CrashRun> {
  const created = await runCliInProcess(
    ['keys', 'create', '--name', `crash ${target.name}`, '--plan', 'standard', '--json'],
    target.env,
  );
  if (created.code !== 0) throw new Error(`keys create failed: ${created.stderr}`);
  const { id: keyId, key } = JSON.parse(created.stdout) as { id: string; key: string };

  const rounds: RoundFigures[] = [];
  let replies = 0;
  let server = await startServerProcess(target.env);
  try {
    const usage = await usageOf(server, key);
    const month = monthOf(usage.resetsAt, target.env.PLAUDER_QUOTA_TIMEZONE);

    for (const killPoint of options.killPoints) {
      const round = await loadUntilKilled(server, key, options.clients, killPoint, replies);
      replies += round.replies;
      const storage = await target.inspect(keyId, month);
      server = await startServerProcess(target.env);
      const usedAfterRestart = (await usageOf(server, key)).used;
      rounds.push({ ...round, storage, usedAfterRestart });
    }

    const lastClient = createHttpClient(server.url, 1);
    const last = await lastClient.send(chatRequest(key, { message: 'last' }));
    lastClient.close();
    if (isReply(last)) replies++;
    const usedAfterRestart = (await usageOf(server, key)).used;
    await server.stop();
    const final = {
      ...(await target.inspect(keyId, month)),
      usedAfterRestart,
      lastStatus: last.status,
    };
    const inFlight = rounds.reduce((sum, r) => sum + r.inFlightAtKill, 0);
    return { keyId, limit: usage.limit, rounds, replies, inFlight, final };
  } finally {
    // Whatever failed, no server process outlives the run (a no-op after a stop).
    await server.stop('SIGKILL');
  }
}

async function loadUntilKilled(
  server: ServerProcess,
  key: string,
  clients: number,
  killPoint: KillPoint,
  earlierReplies: number,
): Promise<Omit<RoundFigures, 'storage' | 'usedAfterRestart'>> {
  const client = createHttpClient(server.url, clients);
  const tally = { sent: 0, replies: 0, quotaExceeded: 0, inFlight: 0, unexpected: [] as string[] };
  let inFlightAtKill = -1;
  let killing: Promise<unknown> | undefined;
  const started = Date.now();

  const due = () =>
    'totalReplies' in killPoint
      ? earlierReplies + tally.replies >= killPoint.totalReplies
      : tally.quotaExceeded >= killPoint.quotaExceeded;
  const kill = () => {
    inFlightAtKill = tally.inFlight;
    killing = server.stop('SIGKILL');
  };
  const record = (res: RawResponse) => {
    if (isReply(res)) tally.replies++;
    else if (res.status === 429 && res.json?.error?.code === 'quota_exceeded')
      tally.quotaExceeded++;
    else tally.unexpected.push(`${res.status} ${res.text.slice(0, 120)}`);
  };

  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let n = 0; killing === undefined; n++) {
        tally.sent++;
        tally.inFlight++;
        try {
          // A session per client: each reply also writes a sealed turn in a transaction.
          record(await client.send(chatRequest(key, { message: `m${n}`, sessionId: `c${c}` })));
        } catch {
          // The server is gone: this request was in flight at the kill.
          tally.inFlight--;
          return;
        }
        tally.inFlight--;
        if (killing === undefined && due()) kill();
      }
    }),
  );
  await killing;
  client.close();
  return {
    killPoint: JSON.stringify(killPoint),
    sent: tally.sent,
    replies: tally.replies,
    quotaExceeded: tally.quotaExceeded,
    inFlightAtKill,
    unexpected: tally.unexpected,
    ms: Date.now() - started,
  };
}

interface Usage {
  limit: number;
  used: number;
  resetsAt: string;
}

async function usageOf(server: ServerProcess, key: string): Promise<Usage> {
  const client = createHttpClient(server.url, 1);
  try {
    const res = await client.send({
      method: 'GET',
      path: '/api/usage',
      headers: { authorization: `Bearer ${key}` },
    });
    if (res.status !== 200) throw new Error(`GET /api/usage answered ${res.status}: ${res.text}`);
    return res.json as Usage;
  } finally {
    client.close();
  }
}

/** `YYYY-MM` of the window that ends at `resetsAt` (the month before it, in the zone). */
function monthOf(resetsAt: string, timeZone = 'UTC'): string {
  const lastMs = Date.parse(resetsAt) - 1;
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
  }).formatToParts(lastMs);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}`;
}
