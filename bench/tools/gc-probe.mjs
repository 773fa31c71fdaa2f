/**
 * Loaded into a server by `tail.mjs --attribute` (`node --import`): records every garbage
 * collection of the process's main thread (start as Unix ms, duration, kind) and writes them,
 * as JSON, to the file named by BENCH_GC_OUT when the process exits.
 */
import fs from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';

const out = process.env.BENCH_GC_OUT;
if (out) {
  const collections = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      collections.push([
        performance.timeOrigin + entry.startTime,
        entry.duration,
        entry.detail?.kind,
      ]);
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('exit', () => fs.writeFileSync(out, JSON.stringify(collections)));
}
