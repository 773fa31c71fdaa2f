/**
 * A real `plauder serve` process whose wall clock is shifted with libfaketime (Debian's
 * `faketime` package): `LD_PRELOAD` the library and set `FAKETIME` to a relative offset, so
 * the fake clock ticks in real time from a chosen instant. Node's `Date.now()` reads
 * `clock_gettime(CLOCK_REALTIME)`, which libfaketime intercepts; the monotonic clock
 * (timers, timeouts) is left alone. The test process keeps the real clock and knows the
 * offset, so it knows the server's time exactly.
 */
import fs from 'node:fs';
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

export interface FakeClockServer {
  readonly server: ServerProcess;
  /** The server's clock now, in Unix ms. */
  now(): number;
  /** Resolves when the server's clock has reached `instant`. */
  until(instant: number): Promise<void>;
}

/** Starts the server so that its clock shows `startAt` at about the moment it is spawned. */
export async function startServerAt(
  startAt: number,
  env: Record<string, string>,
): Promise<FakeClockServer> {
  // Whole seconds: libfaketime's relative offsets are seconds.
  const offsetSeconds = Math.round((startAt - Date.now()) / 1000);
  const server = await startServerProcess({
    ...env,
    LD_PRELOAD: libfaketime(),
    FAKETIME: `${offsetSeconds >= 0 ? '+' : ''}${offsetSeconds}`,
    DONT_FAKE_MONOTONIC: '1',
  });
  const now = () => Date.now() + offsetSeconds * 1000;
  return {
    server,
    now,
    async until(instant) {
      const wait = instant - now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    },
  };
}
