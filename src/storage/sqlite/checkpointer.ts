/**
 * @module storage/sqlite/checkpointer
 * WAL checkpoints off the event loop. A checkpoint copies the WAL's pages into the database
 * file and, with `synchronous = NORMAL`, syncs both files to disk, and on the event loop that
 * held every request in flight for the time of the sync. A worker thread with a connection of
 * its own runs them instead; SQLite lets any connection checkpoint a WAL, and a PASSIVE
 * checkpoint never waits for the writers.
 *
 * SQLite starts the WAL over (instead of letting it grow) only after a checkpoint that copied
 * every page in it. Under steady load the worker's never did: pages committed while it ran
 * were left over, and the WAL grew without bound. So after each of the worker's
 * checkpoints this thread finishes it: it copies only what was committed since (no write of
 * this connection can come in between), which a checkpoint that left nothing over skips.
 *
 * The worker starts at the first interval, so a command that is done within a second (the
 * CLI beside a running server) never starts one. Should it fail to start or stop early,
 * the checkpoints run on the event loop as before, so the WAL is never left to grow.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

export interface Checkpointer {
  /** Stops the checkpoints; resolves once the worker's connection is closed. */
  stop(): Promise<void>;
}

export interface CheckpointerOptions {
  readonly intervalMs: number;
  /** `thread`: in a worker (the default); `event-loop`: on this thread (no worker). */
  readonly where?: 'thread' | 'event-loop';
  /** Called after each interval's checkpoint (for tests). */
  readonly onCheckpoint?: () => void;
}

/**
 * The worker's code, evaluated as a script: it runs from `dist/` and from the sources under
 * the test runner alike, and requires the same better-sqlite3 as the main thread.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
// A busy timeout for opening and closing (a PASSIVE checkpoint never waits): this thread may
// wait, and with none the first statement failed now and then while a write restarted the WAL.
const db = new Database(workerData.file, { fileMustExist: true, timeout: 1000 });
db.pragma('synchronous = NORMAL');
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy (another connection checkpoints): the next interval tries again.
  }
  parentPort.postMessage('done');
};
const timer = setInterval(checkpoint, workerData.intervalMs);
checkpoint();
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

/** A small heap: the worker holds one connection and one timer. */
const WORKER_LIMITS = { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 1 };

export function startCheckpointer(
  sqlite: SqliteDatabase.Database,
  file: string,
  { intervalMs, where = 'thread', onCheckpoint }: CheckpointerOptions,
): Checkpointer {
  let worker: Worker | undefined;
  let onLoop: NodeJS.Timeout | undefined;
  let stopped = false;

  const checkpointHere = () => {
    if (!sqlite.open || sqlite.inTransaction) return;
    try {
      sqlite.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy (another process checkpoints) or closing: the next tick tries again.
    }
  };
  const checkpointed = () => {
    checkpointHere();
    onCheckpoint?.();
  };
  const runOnLoop = () => {
    if (stopped || onLoop) return;
    onLoop = setInterval(checkpointed, intervalMs);
    onLoop.unref();
  };
  const startWorker = () => {
    if (stopped) return;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { file, intervalMs, driver: DRIVER },
        resourceLimits: WORKER_LIMITS,
        // Not the process's Node options: `--input-type=module` made this script a module
        // that could not `require`, and `--cpu-prof` or `--trace-gc` are not meant for it.
        execArgv: [],
      });
    } catch {
      runOnLoop();
      return;
    }
    worker.unref();
    // The worker copied what was there when it began: finish with what came since.
    worker.on('message', () => {
      if (!stopped) checkpointed();
    });
    worker.on('error', () => {});
    worker.once('exit', () => {
      worker = undefined;
      runOnLoop();
    });
  };

  const first = setTimeout(where === 'thread' ? startWorker : runOnLoop, intervalMs);
  first.unref();

  return {
    async stop() {
      stopped = true;
      clearTimeout(first);
      if (onLoop) clearInterval(onLoop);
      const running = worker;
      if (!running) return;
      // 'exit' only: an error of the worker (it then exits) must not fail the stop.
      const exited = new Promise((resolve) => running.once('exit', resolve));
      // Unreferenced while it works, so that it never keeps a process alive; while stopping
      // it is waited for, so it must keep the process alive until it has closed.
      running.ref();
      running.postMessage('stop');
      await exited;
    },
  };
}
