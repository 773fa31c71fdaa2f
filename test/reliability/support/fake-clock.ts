/**
 * A real `plauder serve` process whose wall clock is shifted with libfaketime (Debian's
 * `faketime` package): `LD_PRELOAD` the library, with a relative offset in a file the test
 * rewrites, so the fake clock ticks in real time from an instant the test chooses after the
 * server is up. Node's `Date.now()` reads
 * `clock_gettime(CLOCK_REALTIME)`, which libfaketime intercepts; the monotonic clock
 * (timers, timeouts) is left alone. The test process keeps the real clock and knows the
 * offset, so it knows the server's time exactly.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ServerProcess, startServerProcess } from '../../helpers/processes.js';

const CANDIDATES = [
  '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1',
  '/usr/lib/faketime/libfaketime.so.1',
  '/usr/local/lib/faketime/libfaketime.so.1',
];

export function libfaketime(): string {
  const found = CANDIDATES.find((file) => fs.existsSync(file));
  if (!found) {
    throw new Error(`libfaketime not found (${CANDIDATES.join(', ')}): apt-get install faketime`);
  }
  return found;
}

/**
 * One fake clock for any number of processes (servers and CLI commands): a relative offset
 * in a file that libfaketime re-reads every second (`FAKETIME_TIMESTAMP_FILE`), so the test
 * moves the clock of running processes. It starts at the real time.
 */
export interface FakeClock {
  /** The environment that puts a process on this clock. */
  readonly env: Readonly<Record<string, string>>;
  /** The processes' clock now, in Unix ms. */
  now(): number;
  /**
   * Sets the clock to `instant` (to the second) and resolves once every server in `urls`
   * answers with it: call it when the servers are up and the test is about to begin, so
   * that a slow start on a busy machine takes nothing from the test's own time.
   */
  set(instant: number, urls: readonly string[]): Promise<void>;
  /** Resolves when the clock has reached `instant`. */
  until(instant: number): Promise<void>;
  /** Removes the offset file. */
  remove(): void;
}

export interface FakeClockServer {
  readonly server: ServerProcess;
  /** The server's clock now, in Unix ms. */
  now(): number;
  /** `FakeClock.set` for this server. */
  set(instant: number): Promise<void>;
  /** Resolves when the server's clock has reached `instant`. */
  until(instant: number): Promise<void>;
}

/** How often libfaketime re-reads its file: the longest a new offset takes to apply. */
const CACHE_SECONDS = 1;

export function createFakeClock(): FakeClock {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plauder-faketime-'));
  const file = path.join(dir, 'faketime.rc');
  fs.writeFileSync(file, '+0\n');
  let offsetSeconds = 0;
  const now = () => Date.now() + offsetSeconds * 1000;
  return {
    env: {
      LD_PRELOAD: libfaketime(),
      FAKETIME_TIMESTAMP_FILE: file,
      FAKETIME_CACHE_DURATION: String(CACHE_SECONDS),
      DONT_FAKE_MONOTONIC: '1',
    },
    now,
    async set(instant, urls) {
      // Whole seconds: libfaketime's relative offsets are seconds.
      const previous = now();
      offsetSeconds = Math.round((instant - Date.now()) / 1000);
      // Written beside it and renamed over it: a process that re-reads the file while it is
      // rewritten in place could find it empty and fall back to the real clock for a second.
      fs.writeFileSync(`${file}.next`, `${offsetSeconds >= 0 ? '+' : ''}${offsetSeconds}\n`);
      fs.renameSync(`${file}.next`, file);
      const target = now();
      await Promise.all(urls.map((url) => waitForServerClock(url, previous, target)));
    },
    async until(instant) {
      const wait = instant - now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    },
    remove() {
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts the server on the real clock, then sets its clock to `startAt` once it listens. */
export async function startServerAt(
  startAt: number,
  env: Record<string, string>,
): Promise<FakeClockServer> {
  const fake = createFakeClock();
  const server = await startServerProcess({ ...env, ...fake.env });
  const clock: FakeClockServer = {
    server,
    now: fake.now,
    set: (instant) => fake.set(instant, [server.url]),
    until: fake.until,
  };
  const stop = server.stop;
  (server as { stop: typeof stop }).stop = async (signal) => {
    const code = await stop(signal);
    fake.remove();
    return code;
  };
  await clock.set(startAt);
  return clock;
}

/**
 * Polls the server's `Date` header (whole seconds) until it shows the new time: a second at
 * or after the one the clock was set to. Not "within 2 s of it": a clock moved by a second
 * or two (to the start of the next minute, near a minute's end) looked set while the
 * server still ran on the old offset, which it then dropped in the middle of the test.
 * A clock set backwards is set once the header shows a time before the old one.
 */
async function waitForServerClock(url: string, previous: number, target: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  const second = (ms: number) => Math.floor(ms / 1000) * 1000;
  const forward = target >= previous;
  for (;;) {
    const res = await fetch(`${url}/healthz`);
    await res.arrayBuffer();
    const serverDate = Date.parse(res.headers.get('date') ?? '');
    if (forward ? serverDate >= second(target) : serverDate < second(previous) - 1_000) return;
    if (Date.now() > deadline)
      throw new Error(`the server's clock did not move: ${new Date(serverDate).toISOString()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
