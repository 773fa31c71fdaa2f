/**
 * Figures of a running server process: from `/proc` (resident memory, open file
 * descriptors) and from its own `/metrics` (heap, handles), so a test can show that
 * failures and load leave nothing behind.
 */
import fs from 'node:fs';

export interface ProcessFigures {
  /** Resident set size, bytes (from /proc). */
  readonly rss: number;
  /** Open file descriptors (from /proc): sockets, database files, pipes. */
  readonly fds: number;
  /** V8 heap in use, bytes (from /metrics). */
  readonly heapUsed: number;
  /** libuv handles Node reports as active (from /metrics). */
  readonly handles: number;
}

export async function processFigures(pid: number, baseUrl: string): Promise<ProcessFigures> {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? Number.NaN);
  const fds = fs.readdirSync(`/proc/${pid}/fd`).length;
  const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
  return {
    rss: rssKb * 1024,
    fds,
    heapUsed: metricValue(metrics, 'plauder_nodejs_heap_size_used_bytes'),
    handles: metricValue(metrics, 'plauder_nodejs_active_handles_total'),
  };
}

export function metricValue(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

export const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Asks a process started with `gc-on-signal.mjs` preloaded to collect garbage now. */
export async function collectGarbage(pid: number): Promise<void> {
  process.kill(pid, 'SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, 250));
}
