/**
 * WAL checkpoints of the SQLite store (src/storage/sqlite/open-sqlite.ts): never inside a
 * commit (that made one request in a few hundred wait for a sync to disk), but on a timer,
 * so the WAL's pages reach the database file without any further write.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/storage/sqlite/open-sqlite.js';
import { until } from '../helpers/sse.js';
import { tempDir } from '../helpers/test-database.js';

const dirs: string[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function store() {
  const dir = tempDir('plauder-checkpoint-');
  dirs.push(dir);
  const file = path.join(dir, 'test.db');
  const opened = openSqlite(file);
  closers.push(() => opened.db.destroy());
  return { db: opened.db, file };
}

const ROWS = 300;
const ROW_BYTES = 8192;

describe('SQLite checkpoints', () => {
  it('are not run by commits: the automatic checkpoint is off', async () => {
    const { db } = store();
    const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(
      db,
    );
    expect(rows[0]?.wal_autocheckpoint).toBe(0);
  });

  it('copy the WAL into the database file on their own, with no further write', async () => {
    const { db, file } = store();
    await sql`create table big (b blob not null)`.execute(db);
    // About 700 pages: fewer than SQLite's automatic checkpoint (1000) would ever copy, so
    // only the timer brings them into the database file.
    for (let i = 0; i < ROWS; i++) {
      await sql`insert into big values (randomblob(${ROW_BYTES}))`.execute(db);
    }
    await until(
      () => (fs.statSync(file).size >= ROWS * ROW_BYTES ? true : undefined),
      'the WAL checkpointed into the database file',
    );
    const { rows } = await sql<{ n: number }>`select count(*) as n from big`.execute(db);
    expect(rows[0]?.n).toBe(ROWS);
  });
});
