/**
 * The CLI and the admin API run the same operations: the same usage report, the same key
 * list, the same grace cap, the same "revoked, not missing".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin, startAdminServer } from '../admin/admin-client.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { chat, type TestServer } from '../helpers/test-server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startAdminServer({
    env: { PLAUDER_PLANS: 'standard=1000/month+60/minute,plus=5000' },
  });
});
afterAll(() => server.close());

describe('operations shared by the CLI and the admin API', () => {
  it('report the same usage and the same keys with their limits', async () => {
    const { key } = await server.createKey({ plan: 'standard', name: 'used' });
    await server.createKey({ plan: 'plus', name: 'idle' });
    for (let i = 0; i < 3; i++)
      expect((await chat(server, key, { message: 'x' })).status).toBe(200);

    const api = (await admin(server, 'usage')).json;
    const cli = JSON.parse((await runCliInProcess(['usage', '--json'], server.env)).stdout);
    expect(cli).toEqual({
      month: api.month,
      total: api.total,
      keys: api.keys.map(({ id, name, plan, used, limit }: Record<string, unknown>) => ({
        id,
        name,
        plan,
        used,
        limit,
      })),
    });
    expect(api.total).toBe(3);

    // The per-minute count is that of the clock minute: compare two lists read in one
    // minute (the CLI takes a while on a busy machine; a minute that ends between them is
    // read again).
    const minuteNow = () => Math.floor(Date.now() / 60_000);
    let apiKeys: any[];
    let cliKeys: any[];
    for (;;) {
      const minute = minuteNow();
      apiKeys = (await admin(server, 'keys')).json.keys;
      cliKeys = JSON.parse((await runCliInProcess(['keys', 'list', '--json'], server.env)).stdout);
      if (minuteNow() === minute) break;
    }
    expect(
      cliKeys.map((k: { id: string; used: number; limit: number; perMinute: unknown }) => [
        k.id,
        k.used,
        k.limit,
        k.perMinute,
      ]),
    ).toEqual(
      apiKeys.map(
        (k: { id: string; usage: { used: number; limit: number; perMinute: unknown } }) => [
          k.id,
          k.usage.used,
          k.usage.limit,
          k.usage.perMinute,
        ],
      ),
    );
  });

  it('cap the rotation grace at 365 days in both', async () => {
    const { id } = await server.createKey();
    const api = await admin(server, `keys/${id}/rotate`, { body: { grace: '400d' } });
    expect(api.status).toBe(400);
    expect(api.json.error.code).toBe('grace_invalid');
    const cli = await runCliInProcess(['keys', 'rotate', id, '--grace', '400d'], server.env);
    expect(cli.code).toBe(2);
    expect(cli.stderr).toMatch(/--grace: expected a duration from 0 to 365d/);
    expect(
      (await runCliInProcess(['keys', 'rotate', id, '--grace', '365d'], server.env)).code,
    ).toBe(0);
  });
});
