/**
 * WAL checkpoints of the SQLite store (src/storage/sqlite/open-sqlite.ts, checkpointer.ts):
 * never inside a commit (that made one request in a few hundred wait for a sync to disk),
 * but on a timer in a worker thread with its own connection, so the WAL's pages reach the
 * database file without any further write and without holding the event loop.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { type Checkpointer, startCheckpointer } from '../../src/storage/sqlite/checkpointer.js';
import { openSqlite } from '../../src/storage/sqlite/open-sqlite.js';
import { until } from '../helpers/sse.js';
import { tempDir } from '../helpers/test-database.js';

const dirs: string[] = [];
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function tempFile(): string {
  const dir = tempDir('plauder-checkpoint-');
  dirs.push(dir);
  return path.join(dir, 'test.db');
}

function store() {
  const file = tempFile();
  const opened = openSqlite(file);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await opened.db.destroy();
    await opened.close?.();
  };
  closers.push(close);
  return { db: opened.db, file, close, opened };
}

const ROWS = 300;
const ROW_BYTES = 8192;
/** What ROWS rows take in the database file once checkpointed. */
const FILLED = ROWS * ROW_BYTES;

/** A connection as the store opens it, with rows that are in the WAL only. */
function walWithRows(file: string): SqliteDatabase.Database {
  const sqlite = new SqliteDatabase(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('wal_autocheckpoint = 0');
  sqlite.exec('create table big (b blob not null)');
  const insert = sqlite.prepare('insert into big values (randomblob(?))');
  for (let i = 0; i < ROWS; i++) insert.run(ROW_BYTES);
  closers.push(() => {
    if (sqlite.open) sqlite.close();
  });
  return sqlite;
}

/**
 * The WAL header's checkpoint sequence number: SQLite adds one each time the WAL starts over
 * (its frames all copied into the database file), so the difference between two readings is
 * how often it did.
 */
function walRestarts(file: string): number {
  const header = Buffer.alloc(16);
  const fd = fs.openSync(`${file}-wal`, 'r');
  try {
    fs.readSync(fd, header, 0, 16, 0);
  } finally {
    fs.closeSync(fd);
  }
  return header.readUInt32BE(12);
}

function fileSize(file: string): number {
  return fs.statSync(file).size;
}

/**
 * Holds this thread (no timer, no event of this thread runs) until `done` or `ms` passed;
 * says whether `done` came true meanwhile.
 */
function holdThread(done: () => boolean, ms: number): boolean {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (done()) return true;
    Atomics.wait(cell, 0, 0, 10);
  }
  return done();
}

describe('SQLite checkpoints', () => {
  it('are not run by commits: the automatic checkpoint is off', async () => {
    const { db } = store();
    const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(
      db,
    );
    expect(rows[0]?.wal_autocheckpoint).toBe(0);
  });

  it('copy the WAL into the database file on their own, with no further write', async () => {
    const { db, file, close } = store();
    await sql`create table big (b blob not null)`.execute(db);
    // About 700 pages: fewer than SQLite's automatic checkpoint (1000) would ever copy, so
    // only the timer brings them into the database file.
    for (let i = 0; i < ROWS; i++) {
      await sql`insert into big values (randomblob(${ROW_BYTES}))`.execute(db);
    }
    await until(
      () => (fileSize(file) >= FILLED ? true : undefined),
      'the WAL checkpointed into the database file',
    );
    const { rows } = await sql<{ n: number }>`select count(*) as n from big`.execute(db);
    expect(rows[0]?.n).toBe(ROWS);

    // Closing waits for the checkpointing connection to close as well: the last connection
    // to close removes the WAL, which an open one would keep.
    expect(fs.existsSync(`${file}-wal`)).toBe(true);
    await close();
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
  });

  it('run in a worker thread: the WAL reaches the database file while this thread is held', async () => {
    const file = tempFile();
    const sqlite = walWithRows(file);
    const checkpointer = startCheckpointer(sqlite, file, { intervalMs: 30 });
    closers.push(() => checkpointer.stop());
    // The worker starts at the first interval (on this thread's timer) and checkpoints
    // what is there: wait for that, then write more and hold this thread.
    await until(() => (fileSize(file) >= FILLED ? true : undefined), 'the first checkpoint');
    const insert = sqlite.prepare('insert into big values (randomblob(?))');
    for (let i = 0; i < ROWS; i++) insert.run(ROW_BYTES);
    expect(holdThread(() => fileSize(file) >= 2 * FILLED, 8000)).toBe(true);
  });

  it('let the WAL start over while this thread keeps writing (it does not grow without end)', async () => {
    const file = tempFile();
    const sqlite = walWithRows(file);
    let checkpoints = 0;
    const checkpointer = startCheckpointer(sqlite, file, {
      intervalMs: 20,
      onCheckpoint: () => checkpoints++,
    });
    closers.push(() => checkpointer.stop());
    const insert = sqlite.prepare('insert into big values (randomblob(?))');
    // A write at every turn of the event loop, so every checkpoint of the worker overlaps
    // commits: it copies what was there when it began, never all of it.
    let written = 0;
    const write = () => {
      insert.run(ROW_BYTES);
      written++;
      return new Promise((resolve) => setImmediate(resolve));
    };
    while (checkpoints < 1) await write();
    const before = walRestarts(file);
    const counted = checkpoints;
    // Each interval's checkpoint is finished (on this thread if need be), and the next write
    // starts the WAL over, unless the worker's next checkpoint is reading the WAL by then,
    // which on a busy machine it often is: so wait for two restarts over up to 60 intervals
    // rather than count them in a fixed few. Without the finishing step there was none.
    const restarts = () => walRestarts(file) - before;
    while (restarts() < 2 && checkpoints < counted + 60 && written < 20_000) await write();
    expect(restarts()).toBeGreaterThanOrEqual(2);
    expect(sqlite.prepare('select count(*) as n from big').get()).toEqual({ n: ROWS + written });
  });

  it('on the event loop (the fallback) wait while this thread is held: the test above can fail', async () => {
    const file = tempFile();
    const sqlite = walWithRows(file);
    const checkpointer = startCheckpointer(sqlite, file, { intervalMs: 30, where: 'event-loop' });
    closers.push(() => checkpointer.stop());
    expect(holdThread(() => fileSize(file) >= FILLED, 600)).toBe(false);
    await until(() => (fileSize(file) >= FILLED ? true : undefined), 'a checkpoint after the hold');
  });

  it("do not count as another connection's commit (data_version stays)", async () => {
    const file = tempFile();
    const sqlite = walWithRows(file);
    const version = () => sqlite.pragma('data_version', { simple: true });
    const before = version();
    const checkpointer = startCheckpointer(sqlite, file, { intervalMs: 30 });
    closers.push(() => checkpointer.stop());
    await until(() => (fileSize(file) >= FILLED ? true : undefined), 'a checkpoint');
    expect(version()).toBe(before);
    // A commit of another connection does move it: the check above can fail.
    const other = new SqliteDatabase(file);
    other.exec("insert into big values (x'00')");
    other.close();
    expect(version()).not.toBe(before);
  });

  it('stop resolves when nothing else keeps the process alive (the built module, in a process of its own)', () => {
    const file = tempFile();
    walWithRows(file).close();
    const checkpointer = path.resolve(
      path.dirname(fileURLToPath(import.meta.url)),
      '../../dist/storage/sqlite/checkpointer.js',
    );
    // The worker is unreferenced while it runs; `stop` waits for it to close, and a process
    // whose last await is that wait must not end before (Node exits with 13 then). The wait
    // is longest when the worker's connection is the last one and closing it checkpoints a
    // large WAL, as when the store closes its own connection first.
    const script = `
      import Database from 'better-sqlite3';
      import { startCheckpointer } from ${JSON.stringify(checkpointer)};
      const sqlite = new Database(${JSON.stringify(file)});
      sqlite.pragma('wal_autocheckpoint = 0');
      let checkpoints = 0;
      const checkpointer = startCheckpointer(sqlite, ${JSON.stringify(file)}, {
        intervalMs: 20,
        onCheckpoint: () => checkpoints++,
      });
      while (checkpoints === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const insert = sqlite.prepare('insert into big values (randomblob(65536))');
      for (let i = 0; i < 800; i++) insert.run();
      sqlite.close();
      await checkpointer.stop();
      console.log('stopped');
    `;
    const scriptFile = path.join(path.dirname(checkpointer), `stop-test-${process.pid}.mjs`);
    fs.writeFileSync(scriptFile, script);
    closers.push(() => fs.rmSync(scriptFile, { force: true }));
    const run = spawnSync(process.execPath, [scriptFile], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('stopped');
    expect(run.status).toBe(0);
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
  });

  it('stop before the first interval starts no worker and leaves the connection working', async () => {
    const file = tempFile();
    const sqlite = walWithRows(file);
    const checkpointer: Checkpointer = startCheckpointer(sqlite, file, { intervalMs: 200 });
    await checkpointer.stop();
    // Well past the first interval: no checkpoint ran.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(fileSize(file)).toBeLessThan(FILLED);
    expect(sqlite.prepare('select count(*) as n from big').get()).toEqual({ n: ROWS });
  });
});
