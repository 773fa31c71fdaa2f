/**
 * The session-expiry rule (src/storage/repositories/session-expiry.ts): a session idle
 * longer than the TTL has expired, and the SQL form says the same of the stored rows.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  activeSince,
  expiredSql,
  isExpired,
} from '../../src/storage/repositories/session-expiry.js';
import { recordingCore } from '../helpers/recording-core.js';
import { chat, startTestServer, type TestServer } from '../helpers/test-server.js';

let server: TestServer | undefined;
afterEach(() => server?.close());

const HOUR = 3_600_000;

describe('session expiry', () => {
  it('expires a session idle longer than the TTL, not one idle exactly the TTL', () => {
    const now = Date.UTC(2026, 10, 2, 12);
    const since = activeSince(now, HOUR);
    expect(isExpired(now - HOUR, since)).toBe(false);
    expect(isExpired(now - HOUR - 1, since)).toBe(true);
    expect(isExpired(now, since)).toBe(false);
  });

  it('says in SQL which stored sessions have expired, as the JavaScript rule does', async () => {
    const clock = { now: Date.UTC(2026, 10, 2, 12) };
    const { core } = recordingCore(() => 'ok');
    server = await startTestServer({ core, clock: () => clock.now });
    const s = server;
    const { key } = await s.createKey();
    for (const [sessionId, at] of [
      ['older', clock.now - HOUR - 1],
      ['exact', clock.now - HOUR],
      ['newer', clock.now - 1],
    ] as const) {
      clock.now = at;
      expect((await chat(s, key, { message: 'Hallo', sessionId })).status).toBe(200);
    }
    clock.now = Date.UTC(2026, 10, 2, 12);
    const since = activeSince(clock.now, HOUR);
    const rows = await s.services.store.db
      .selectFrom('sessions')
      .select((eb) => ['last_active_at', expiredSql(eb, since).as('expired')])
      .execute();
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(Boolean(row.expired)).toBe(isExpired(Number(row.last_active_at), since));
    }
    expect(rows.filter((row) => Boolean(row.expired))).toHaveLength(1);
  });
});
