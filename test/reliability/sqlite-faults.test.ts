/**
 * SQLite under a real server process when writing is impossible: another connection holds
 * the write lock longer than the busy timeout (5 s), or the disk fills up. Chat requests
 * must fail closed (500 `internal_error`, no reply, nothing counted beyond what replies
 * and failed refunds explain), reads keep working, and the service recovers by itself.
 * SQLite only: PostgreSQL outages are in test/postgres/outage.test.ts.
 */
import { execFileSync } from 'node:child_process';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerProcess } from '../helpers/processes.js';
import { startServerProcess } from '../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { chatRequest, createHttpClient, isReply, type RawResponse } from './support/http-client.js';
import { createKeyWithCli, once, usedOf } from './support/server-process.js';

const BUSY_TIMEOUT_MS = 5000;
let database: TestDatabase | undefined;
let server: ServerProcess | undefined;

afterEach(async () => {
  await server?.stop();
  server = undefined;
  await database?.drop();
  database = undefined;
});

function expectInternalError(res: RawResponse): void {
  expect(res.status, res.text).toBe(500);
  expect(res.json).toEqual({
    error: {
      code: 'internal_error',
      message: 'A technical error occurred. Please try again later.',
      requestId: res.headers['x-request-id'],
    },
  });
}

function integrity(file: string): string {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.pragma('integrity_check', { simple: true }) as string;
  } finally {
    db.close();
  }
}

describe('SQLite that cannot be written', () => {
  it('fails a chat request closed while another connection holds the write lock past the busy timeout, and recovers', async () => {
    database = await createTestDatabase('sqlite');
    const env = { ...database.env, PLAUDER_CORE: 'placeholder' };
    const { key } = await createKeyWithCli(env);
    server = await startServerProcess(env);
    const url = server.url;
    expect(isReply(await once(url, 'POST', '/api/chat', key, { message: 'vorher' }))).toBe(true);

    const locker = new Database(database.file, { timeout: 0 });
    locker.exec('BEGIN EXCLUSIVE');
    let lockHeldMs = 0;
    let res: RawResponse;
    let readMs: number;
    const lockedAt = Date.now();
    try {
      // WAL: readers are not blocked by the writer's lock.
      const usage = await once(url, 'GET', '/api/usage', key);
      readMs = Date.now() - lockedAt;
      expect(usage.status).toBe(200);
      expect(usage.json.used).toBe(1);
      const started = Date.now();
      res = await once(url, 'POST', '/api/chat', key, { message: 'gesperrt' });
      lockHeldMs = Date.now() - lockedAt;
      expect(Date.now() - started).toBeGreaterThanOrEqual(BUSY_TIMEOUT_MS - 100);
    } finally {
      locker.exec('ROLLBACK');
      locker.close();
    }
    expectInternalError(res);

    // Released: the next request is answered and counted, the failed one is not.
    const after = await once(url, 'POST', '/api/chat', key, { message: 'danach' });
    expect(isReply(after)).toBe(true);
    expect(await usedOf(url, key)).toBe(2);
    expect((await once(url, 'GET', '/readyz')).status).toBe(200);
    console.log(
      `[sqlite busy] read under the lock ${readMs} ms; chat under the lock: ${res.status} ${res.json.error.code} ` +
        `after ${lockHeldMs} ms of lock; after release: ${after.status}, counted 2 of 2 replies`,
    );
  }, 30_000);

  it('fails chat requests closed when the disk is full, keeps reading, and recovers when there is space again', async () => {
    database = await createTestDatabase('sqlite');
    const env = { ...database.env, PLAUDER_CORE: 'placeholder' };
    const { key } = await createKeyWithCli(env);
    // The server may write files of at most 256 KiB (RLIMIT_FSIZE, soft limit only, so it can
    // be lifted again): the WAL hits the limit like a full disk. Node ignores SIGXFSZ, so the
    // write fails with EFBIG and SQLite reports an I/O error, as it does on ENOSPC.
    server = await startServerProcess(env, [
      'prlimit',
      '--fsize=262144:unlimited',
      process.execPath,
    ]);
    const pid = server.child.pid ?? 0;
    const client = createHttpClient(server.url, 1);
    const big = 'x'.repeat(3900);
    let replies = 0;
    const failures: RawResponse[] = [];
    for (let i = 0; i < 400 && failures.length < 5; i++) {
      const res = await client.send(
        chatRequest(key, { message: `${big}${i}`, sessionId: `s${i}` }),
      );
      if (isReply(res)) replies++;
      else failures.push(res);
    }
    for (const res of failures) expectInternalError(res);
    const usage = await once(server.url, 'GET', '/api/usage', key);
    expect(usage.status).toBe(200);
    const usedWhileFull = usage.json.used as number;
    // Counted beyond the replies only while a failed request's refund is waiting for the
    // disk: the refund is a write too, so it is retried in the background.
    expect(usedWhileFull).toBeGreaterThanOrEqual(replies);
    expect(usedWhileFull - replies).toBeLessThanOrEqual(failures.length);

    // Space again: lift the limit of the running process.
    execFileSync('prlimit', ['--pid', String(pid), '--fsize=unlimited:unlimited']);
    const freedAt = Date.now();
    const after = await client.send(
      chatRequest(key, { message: 'wieder Platz', sessionId: 'after' }),
    );
    client.close();
    expect(isReply(after)).toBe(true);
    replies++;
    // The pending refunds land by themselves: exactly the replies stay counted.
    let used = await usedOf(server.url, key);
    while (used !== replies && Date.now() - freedAt < 15_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      used = await usedOf(server.url, key);
    }
    const settledMs = Date.now() - freedAt;
    expect(used).toBe(replies);
    await server.stop();
    server = undefined;
    const check = integrity(database.file);
    expect(check).toBe('ok');
    console.log(
      `[sqlite disk full] ${replies - 1} replies before the 256 KiB file limit, then ${failures.length} × ` +
        `${failures[0]?.status} ${failures[0]?.json?.error?.code}; counted ${usedWhileFull} while full ` +
        `(${usedWhileFull - (replies - 1)} refunds pending); after lifting the limit: ${after.status}, ` +
        `count back to the ${replies} replies after ${settledMs} ms; integrity ${check}`,
    );
  }, 30_000);
});
