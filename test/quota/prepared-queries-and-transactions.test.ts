/**
 * Hot-path statements (prepared queries; on SQLite run directly on the connection) must
 * never become part of a transaction that another task has open and is waiting in: if
 * that transaction rolls back, a quota reservation made meanwhile must still count.
 */
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

describe('prepared queries next to an open transaction', () => {
  let server: TestServer | undefined;
  afterAll(async () => server?.close());

  it('keeps reservations made while another transaction waits and then rolls back', async () => {
    server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
    const { id } = await server.createKey({ plan: 'standard' });
    const quotaKey = {
      id,
      name: 'test key',
      plan: 'standard',
      limit: 1000,
      minuteLimit: undefined,
    };
    const { quota, usage, store } = server.services;
    const now = Date.now();
    const month = quota.monthOf(now).month;

    let inside!: () => void;
    const transactionOpen = new Promise<void>((resolve) => {
      inside = resolve;
    });
    let finish!: () => void;
    const released = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const rolledBack = store.db
      .transaction()
      .execute(async (trx) => {
        await sql`update api_keys set name = 'renamed inside' where id = ${id}`.execute(trx);
        inside();
        await released;
        throw new Error('roll back');
      })
      .catch((error: unknown) => error);

    await transactionOpen;
    // While the transaction is open and waiting, the hot path reserves five requests.
    const reserving = Promise.all(Array.from({ length: 5 }, () => quota.reserve(quotaKey, now)));
    await new Promise((resolve) => setTimeout(resolve, 30));
    finish();
    expect(String(await rolledBack)).toContain('roll back');
    const reservations = await reserving;

    expect(reservations.every((r) => r.ok)).toBe(true);
    expect(await usage.used(id, month)).toBe(5);
    const key = await store.db
      .selectFrom('api_keys')
      .select('name')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(key.name).toBe('test key');
  });
});
