/**
 * The SQLite store's direct runner (src/storage/sqlite/direct-runner.ts): reads at once or
 * in the group that waits, writes committed in groups, and a group never half-committed.
 * On a real SQLite file;
 * `sqlite-faults.test.ts` covers a held write lock and a full disk on the whole server.
 */
import fs from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createDirectRunner } from '../../src/storage/sqlite/direct-runner.js';
import { tempDir } from '../helpers/test-database.js';

const dirs: string[] = [];
const open: SqliteDatabase.Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) if (db.open) db.close();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function database() {
  const dir = tempDir('plauder-direct-');
  dirs.push(dir);
  const file = path.join(dir, 'test.db');
  const sqlite = new SqliteDatabase(file, { timeout: 200 });
  sqlite.pragma('journal_mode = WAL');
  sqlite.exec(`
    create table counters (name text primary key, value integer not null check (value <= 3));
    insert into counters values ('a', 0), ('b', 0);
  `);
  open.push(sqlite);
  // Every statement the runner runs, in order (the prepared statements are cached).
  const ran: string[] = [];
  const statements = new Map<string, SqliteDatabase.Statement>();
  const prepare = (sql: string) => {
    ran.push(sql);
    let statement = statements.get(sql);
    if (statement === undefined) {
      statement = sqlite.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  return { sqlite, file, ran, run: createDirectRunner(sqlite, prepare) };
}

const bump = 'update counters set value = value + 1 where name = ? returning value';
const value = (sqlite: SqliteDatabase.Database, name: string) =>
  (sqlite.prepare('select value from counters where name = ?').get(name) as { value: number })
    .value;

describe('the SQLite direct runner', () => {
  it('answers a read at once, without waiting for the event loop', () => {
    const { run } = database();
    const result = run('select value from counters where name = ?', ['a']);
    expect(result).toEqual({ rows: [{ value: 0 }] });
  });

  it('runs a read made while a group waits in that group, after the writes queued before it', async () => {
    const { sqlite, run, ran } = database();
    const write = run(bump, ['a']);
    const read = run('select value from counters where name = ?', ['a']);
    // Not answered at once: it waits for the group, and sees its write.
    expect(read).toBeInstanceOf(Promise);
    expect(value(sqlite, 'a')).toBe(0);
    const [written, found] = await Promise.all([write, read]);
    expect(written?.rows).toEqual([{ value: 1 }]);
    expect(found?.rows).toEqual([{ value: 1 }]);
    expect(ran.filter((sql) => /^(begin|commit)/.test(sql))).toEqual(['begin immediate', 'commit']);
  });

  it('runs a job alone with the reads that joined its group without a savepoint', async () => {
    const { sqlite, run, ran } = database();
    const { atomically } = run;
    if (atomically === undefined) throw new Error('the SQLite runner runs jobs itself');
    const select = 'select value from counters where name = ?';
    const job = atomically({ sql: bump, parameters: ['a'] }, () => [
      { sql: bump, parameters: ['b'] },
    ]);
    const read = run(select, ['b']);
    const [bumped, found] = await Promise.all([job, read]);
    expect(bumped).toEqual([{ value: 1 }]);
    expect(found?.rows).toEqual([{ value: 1 }]);
    expect([value(sqlite, 'a'), value(sqlite, 'b')]).toEqual([1, 1]);
    expect(ran.filter((sql) => /^(begin|commit|savepoint|release)/.test(sql))).toEqual([
      'begin immediate',
      'commit',
    ]);
  });

  it('commits the writes of one event-loop turn together and answers each its own result', async () => {
    const { sqlite, run, file } = database();
    const walBefore = fs.statSync(`${file}-wal`).size;
    const results = await Promise.all([run(bump, ['a']), run(bump, ['b']), run(bump, ['a'])]);
    expect(results.map((r) => r?.rows)).toEqual([[{ value: 1 }], [{ value: 1 }], [{ value: 2 }]]);
    expect([value(sqlite, 'a'), value(sqlite, 'b')]).toEqual([2, 1]);
    // One commit wrote the table's page once: one WAL frame (page + 24-byte header) and the
    // commit's own, not one frame per write.
    const grew = fs.statSync(`${file}-wal`).size - walBefore;
    expect(grew).toBeGreaterThan(0);
    expect(grew).toBeLessThanOrEqual(2 * (4096 + 24));
  });

  it('fails a write that breaks a constraint alone and commits the rest of its group', async () => {
    const { sqlite, run } = database();
    sqlite.prepare("update counters set value = 3 where name = 'b'").run();
    const results = await Promise.allSettled([
      run(bump, ['a']),
      run(bump, ['b']),
      run(bump, ['a']),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toContain('CHECK constraint');
    expect([value(sqlite, 'a'), value(sqlite, 'b')]).toEqual([2, 3]);
  });

  it('takes a job that fails part-way out of its group: nothing of it stays, the rest commits', async () => {
    const { sqlite, run } = database();
    sqlite.prepare("update counters set value = 3 where name = 'b'").run();
    const read = { sql: 'select value from counters where name = ?', parameters: ['a'] };
    const bumpBound = (name: string) => ({ sql: bump, parameters: [name] });
    const { atomically } = run;
    if (atomically === undefined) throw new Error('the SQLite runner runs jobs itself');
    const results = await Promise.allSettled([
      run(bump, ['a']),
      // Bumps 'a', then breaks the constraint on 'b': its bump of 'a' must not stay.
      atomically(read, () => [bumpBound('a'), bumpBound('b')]),
      atomically(read, () => [bumpBound('a')]),
      run(bump, ['a']),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(String((results[1] as PromiseRejectedResult).reason)).toContain('CHECK constraint');
    // The third read what the first wrote, in the group that committed.
    expect((results[2] as PromiseFulfilledResult<unknown>).value).toEqual([{ value: 1 }]);
    expect([value(sqlite, 'a'), value(sqlite, 'b')]).toEqual([3, 3]);
  });

  it('fails the whole group and keeps nothing of it when the write lock is not granted', async () => {
    const { sqlite, run, file } = database();
    const other = new SqliteDatabase(file, { timeout: 0 });
    open.push(other);
    other.prepare('begin immediate').run();
    const results = await Promise.allSettled([run(bump, ['a']), run(bump, ['b'])]);
    other.prepare('rollback').run();

    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(String((results[0] as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
    expect(sqlite.inTransaction).toBe(false);
    expect([value(sqlite, 'a'), value(sqlite, 'b')]).toEqual([0, 0]);
  });

  it('answers a read that joined a group whose write lock is not granted on its own', async () => {
    const { run, file } = database();
    const other = new SqliteDatabase(file, { timeout: 0 });
    open.push(other);
    other.prepare('begin immediate').run();
    const results = await Promise.allSettled([
      run(bump, ['a']),
      run('select value from counters where name = ?', ['a']),
    ]);
    other.prepare('rollback').run();

    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    expect((results[1] as PromiseFulfilledResult<{ rows: unknown }>).value.rows).toEqual([
      { value: 0 },
    ]);
    // The connection works again once the lock is free.
    await expect(run(bump, ['a'])).resolves.toEqual({ rows: [{ value: 1 }] });
  });

  it('leaves statements to Kysely while a transaction is open, and holds a group until it ends', async () => {
    const { sqlite, run } = database();
    const queued = run(bump, ['a']);
    sqlite.prepare('begin immediate').run();
    sqlite.prepare("update counters set value = 3 where name = 'b'").run();
    expect(run('select value from counters where name = ?', ['a'])).toBeUndefined();
    await new Promise((resolve) => setTimeout(resolve, 20));
    sqlite.prepare('rollback').run();

    await expect(queued).resolves.toEqual({ rows: [{ value: 1 }] });
    expect([value(sqlite, 'a'), value(sqlite, 'b')]).toEqual([1, 0]);
  });
});
