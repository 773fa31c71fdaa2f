/**
 * The operator CLI (docs/contract.md, "Operating it") on the same database as a running
 * server: every change made through the CLI holds on the server's next request. The
 * commands run in this process (`plauder()` with a connection of its own, as a separate
 * process has); the built executable (`dist/cli/main.js`) is run where its output streams
 * and exit codes are the subject.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { type CliResult, runCli } from '../helpers/processes.js';
import {
  chat,
  type HttpResult,
  http,
  startTestServer,
  type TestServer,
} from '../helpers/test-server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
});
afterAll(() => server.close());

function cliProcess(...args: string[]): Promise<CliResult> {
  return runCli(args, server.env);
}

function cli(...args: string[]): Promise<CliResult> {
  return runCliInProcess(args, server.env);
}

interface Issued {
  id: string;
  key: string;
  name: string;
  plan: string;
  active: boolean;
}

async function createKey(name: string, ...extra: string[]): Promise<Issued> {
  const res = await cli('keys', 'create', '--name', name, '--plan', 'standard', '--json', ...extra);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout) as Issued;
}

function month(): string {
  return server.services.quota.monthOf(Date.now()).month;
}

function used(id: string, inMonth = month()): Promise<number> {
  return server.services.usage.used(id, inMonth);
}

function expectReply(res: HttpResult): void {
  expect(res.status).toBe(200);
  expect(res.json).toEqual({ reply: expect.any(String) });
}

function expectSoft(res: HttpResult, code: string): void {
  expect(res.status).toBe(200);
  expect(res.json).toEqual({
    reply: expect.any(String),
    error: { code, message: expect.any(String) },
  });
}

function expect401(res: HttpResult): void {
  expect(res.status).toBe(401);
  expect(res.json.error.code).toBe('invalid_api_key');
}

/**
 * Waits until the server sees a key change the CLI committed: at once on SQLite, and on
 * PostgreSQL when the change's notification arrives, which the rules allow to take up to one
 * second. Asks `GET /api/usage`, which is not counted; `status` is 401 for a key that is gone.
 */
async function serverSees(
  key: string,
  expected: { status: 401 } | { plan?: string; active?: boolean },
): Promise<void> {
  await vi.waitFor(
    async () => {
      const res = await http(`${server.url}/api/usage`, { key });
      if ('status' in expected) expect(res.status).toBe(expected.status);
      else expect(res.json).toMatchObject(expected);
    },
    { timeout: 1000, interval: 20 },
  );
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('plauder keys create', () => {
  it('--json prints exactly {id, key, name, plan, active} and the key works at once', async () => {
    const res = await cliProcess(
      'keys',
      'create',
      '--name',
      'Json Key',
      '--plan',
      'standard',
      '--json',
    );
    expect(res.code).toBe(0);
    expect(res.stderr).toBe('');
    expect(res.stdout.trim().split('\n')).toHaveLength(1);
    const issued = JSON.parse(res.stdout);
    expect(Object.keys(issued)).toEqual(['id', 'key', 'name', 'plan', 'active']);
    expect(issued).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_]+$/),
      key: expect.stringMatching(/^plauder_[A-Za-z0-9]+$/),
      name: 'Json Key',
      plan: 'standard',
      active: true,
    });
    expect(issued.key.length).toBeLessThanOrEqual(100);
    expectReply(await chat(server, issued.key, { message: 'Hallo' }));
    expect(await used(issued.id)).toBe(1);
  });

  it('shows the key exactly once in the human output, with a warning to store it', async () => {
    const res = await cli('keys', 'create', '--name', 'Human Key', '--plan', 'plus');
    expect(res.code).toBe(0);
    const key = /plauder_[A-Za-z0-9]+/.exec(res.stdout)?.[0] ?? '';
    expect(key).not.toBe('');
    expect(res.stdout.split(key)).toHaveLength(2);
    expect(res.stdout).toMatch(/only time|shown once/i);
    expect(res.stdout).toContain('Human Key');
    const answer = await chat(server, key, { message: 'Hi' }, '/api/chat-en');
    expectReply(answer);
    expect(answer.headers.get('x-ratelimit-limit')).toBe('5000');
  });

  it('--inactive gives a key that gets the soft error plan_inactive and is not counted', async () => {
    const issued = await createKey('Inactive Key', '--inactive');
    expect(issued.active).toBe(false);
    expectSoft(await chat(server, issued.key, { message: 'Hallo' }), 'plan_inactive');
    expect(await used(issued.id)).toBe(0);
  });

  it('refuses an unknown plan with exit 2, lists the plans and creates nothing', async () => {
    const before = (await server.services.keys.list()).length;
    const res = await cli('keys', 'create', '--name', 'X', '--plan', 'gold');
    expect(res.code).toBe(2);
    expect(res.stdout).not.toMatch(/plauder_/);
    expect(res.stderr).toMatch(/gold/);
    expect(res.stderr).toMatch(/standard/);
    expect(res.stderr).toMatch(/plus/);
    expect((await server.services.keys.list()).length).toBe(before);
  });

  it('answers a missing --name with exit 2 and the usage', async () => {
    const before = (await server.services.keys.list()).length;
    const res = await cli('keys', 'create', '--plan', 'standard');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/usage: plauder keys create --name/i);
    expect((await server.services.keys.list()).length).toBe(before);
  });
});

describe('plauder keys list', () => {
  it('--json lists keys with this month usage and without any secret', async () => {
    const a = await createKey('List A');
    const b = await createKey('List B');
    for (let i = 0; i < 3; i++) expectReply(await chat(server, a.key, { message: `Hallo ${i}` }));
    expectSoft(await chat(server, a.key, { message: '' }), 'message_missing'); // not counted

    const res = await cli('keys', 'list', '--json');
    expect(res.code).toBe(0);
    const rows = JSON.parse(res.stdout) as Array<Record<string, unknown>>;
    const rowA = rows.find((r) => r.id === a.id);
    const rowB = rows.find((r) => r.id === b.id);
    expect(rowA).toMatchObject({ name: 'List A', plan: 'standard', used: 3, month: month() });
    expect(rowB).toMatchObject({ name: 'List B', used: 0 });
    for (const secret of [a.key, b.key, sha256(a.key), sha256(b.key), a.key.slice(-20)]) {
      expect(res.stdout).not.toContain(secret);
    }
    for (const row of rows) {
      expect(Object.keys(row)).not.toEqual(expect.arrayContaining(['key']));
      expect(Object.keys(row).filter((k) => /hash|secret/i.test(k))).toEqual([]);
    }
  });

  it('prints a human table with id, name, plan, status and usage, and no secret', async () => {
    const issued = await createKey('Table Key');
    expectReply(await chat(server, issued.key, { message: 'Hallo' }));
    const res = await cli('keys', 'list');
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+PLAN\s+STATUS\s+USED/);
    const row = lines.find((l) => l.startsWith(issued.id));
    expect(row).toMatch(/Table Key\s+standard\s+active\s+1\/1000/);
    expect(res.stdout).not.toContain(issued.key);
    expect(res.stdout).not.toContain(sha256(issued.key));
  });
});

describe('plauder keys rotate', () => {
  it('--json gives a new key for the same id that works at once; the old key gets 401 as soon as the server hears of it', async () => {
    const old = await createKey('Rotate Key');
    expectReply(await chat(server, old.key, { message: 'Hallo' }));
    const res = await cli('keys', 'rotate', old.id, '--json');
    expect(res.code, res.stderr).toBe(0);
    const rotated = JSON.parse(res.stdout) as Issued;
    expect(rotated).toEqual({
      id: old.id,
      key: expect.stringMatching(/^plauder_/),
      name: 'Rotate Key',
      plan: 'standard',
      active: true,
    });
    expect(rotated.key).not.toBe(old.key);

    await serverSees(old.key, { status: 401 });
    expect401(await chat(server, old.key, { message: 'Hallo' }));
    const answer = await chat(server, rotated.key, { message: 'Hallo' });
    expectReply(answer);
    // Usage carries over to the new secret.
    expect(answer.headers.get('x-ratelimit-remaining')).toBe('998');
    expect(await used(old.id)).toBe(2);
  });

  it('--grace 1h keeps the old key valid beside the new one', async () => {
    const old = await createKey('Grace Key');
    const res = await cli('keys', 'rotate', old.id, '--grace', '1h');
    expect(res.code, res.stderr).toBe(0);
    const newKey = /plauder_[A-Za-z0-9]+/.exec(res.stdout)?.[0] ?? '';
    expect(newKey).not.toBe(old.key);
    expect(res.stdout.split(newKey)).toHaveLength(2);
    expect(res.stdout).toMatch(/1h/);
    expectReply(await chat(server, old.key, { message: 'Hallo' }));
    expectReply(await chat(server, newKey, { message: 'Hallo' }));
  });

  it('refuses --grace nonsense with exit 2 and leaves the key as it was', async () => {
    const old = await createKey('Bad Grace Key');
    const res = await cli('keys', 'rotate', old.id, '--grace', 'nonsense');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--grace/);
    expect(res.stdout).not.toMatch(/plauder_/);
    expectReply(await chat(server, old.key, { message: 'Hallo' }));
  });
});

describe('plauder keys revoke | set-plan | deactivate | activate', () => {
  it('revoke: the next request gets 401', async () => {
    const issued = await createKey('Revoke Key');
    expectReply(await chat(server, issued.key, { message: 'Hallo' }));
    const res = await cli('keys', 'revoke', issued.id);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(issued.id);
    await serverSees(issued.key, { status: 401 });
    expect401(await chat(server, issued.key, { message: 'Hallo' }));
    expect401(await http(`${server.url}/api/usage`, { key: issued.key }));
  });

  it('set-plan plus: the next request shows X-RateLimit-Limit 5000', async () => {
    const issued = await createKey('Plan Key');
    expect(
      (await chat(server, issued.key, { message: 'Hallo' })).headers.get('x-ratelimit-limit'),
    ).toBe('1000');
    const res = await cli('keys', 'set-plan', issued.id, 'plus');
    expect(res.code, res.stderr).toBe(0);
    await serverSees(issued.key, { plan: 'plus' });
    const answer = await chat(server, issued.key, { message: 'Hallo' });
    expectReply(answer);
    expect(answer.headers.get('x-ratelimit-limit')).toBe('5000');
    expect(answer.headers.get('x-ratelimit-remaining')).toBe('4998');
  });

  it('set-plan to an unknown plan: exit 2, the plan stays', async () => {
    const issued = await createKey('Plan Key 2');
    const res = await cli('keys', 'set-plan', issued.id, 'gold');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/standard.*plus|plus.*standard/);
    expect(
      (await chat(server, issued.key, { message: 'Hallo' })).headers.get('x-ratelimit-limit'),
    ).toBe('1000');
  });

  it('deactivate gives plan_inactive on the next request; activate gives replies again', async () => {
    const issued = await createKey('Toggle Key');
    const off = await cli('keys', 'deactivate', issued.id);
    expect(off.code, off.stderr).toBe(0);
    await serverSees(issued.key, { active: false });
    expectSoft(await chat(server, issued.key, { message: 'Hallo' }), 'plan_inactive');
    const on = await cli('keys', 'activate', issued.id);
    expect(on.code, on.stderr).toBe(0);
    await serverSees(issued.key, { active: true });
    expectReply(await chat(server, issued.key, { message: 'Hallo' }));
    expect(await used(issued.id)).toBe(1);
  });

  // These change nothing, so they run side by side.
  it.concurrent.each([['revoke'], ['activate'], ['deactivate'], ['rotate'], ['set-plan', 'plus']])(
    '%s with an unknown id exits 1 with a message naming the id',
    async (command, ...rest) => {
      const res = await cli('keys', command, 'key_doesnotexist0000', ...rest);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/key_doesnotexist0000/);
      expect(res.stderr).toMatch(/no .*key|not found|unknown/i);
      expect(res.stderr).not.toMatch(/\n\s+at /); // no stack trace
    },
  );
});

describe('plauder usage', () => {
  it('--json {month, total, keys} matches the counts the server keeps', async () => {
    const a = await createKey('Usage A');
    for (let i = 0; i < 2; i++)
      expectReply(await chat(server, a.key, { message: 'Hallo' }, '/api/chat-en'));

    const res = await cli('usage', '--json');
    expect(res.code, res.stderr).toBe(0);
    const report = JSON.parse(res.stdout) as {
      month: string;
      total: number;
      keys: Array<{ id: string; used: number }>;
    };
    expect(report.month).toBe(month());
    expect(report.keys.find((k) => k.id === a.id)).toMatchObject({
      name: 'Usage A',
      plan: 'standard',
      used: 2,
      limit: 1000,
    });
    const all = await server.services.keys.list();
    expect(report.keys.map((k) => k.id).sort()).toEqual(all.map((k) => k.id).sort());
    let total = 0;
    for (const k of report.keys) {
      expect(k.used, k.id).toBe(await used(k.id));
      total += k.used;
    }
    expect(report.total).toBe(total);
    expect(report.total).toBeGreaterThanOrEqual(2);
  });

  it('--month lists only the keys that existed in that month', async () => {
    const kept = await createKey('Usage Existing');
    const gone = await createKey('Usage Revoked');
    expect((await cli('keys', 'revoke', gone.id)).code).toBe(0);
    const report = async (inMonth: string) => {
      const res = await cli('usage', '--month', inMonth, '--json');
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout) as {
        month: string;
        total: number;
        keys: Array<{ id: string }>;
      };
    };
    // Before the keys were created: none of them.
    const before = await report('2025-01');
    expect(before).toMatchObject({ month: '2025-01', total: 0 });
    expect(before.keys.map((k) => k.id)).not.toContain(kept.id);
    expect(before.keys.map((k) => k.id)).not.toContain(gone.id);
    // This month: both (the revoked one existed until today).
    const now = (await report(month())).keys.map((k) => k.id);
    expect(now).toEqual(expect.arrayContaining([kept.id, gone.id]));
    // A later month: only the key that was not revoked.
    const later = (await report('2099-01')).keys.map((k) => k.id);
    expect(later).toContain(kept.id);
    expect(later).not.toContain(gone.id);
    const human = await cli('usage', '--month', '2025-01');
    expect(human.stdout).toMatch(/No keys existed in 2025-01\./);
  });

  it('prints a human report with the total', async () => {
    const res = await cli('usage');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`Usage in ${month()}`);
    expect(res.stdout).toMatch(/^Total: \d+$/m);
  });

  it.concurrent.each(['2020-13', '2020-1', 'January', ''])(
    'refuses --month %j with exit 2',
    async (value) => {
      const res = await cli('usage', '--month', value);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/--month|YYYY-MM/);
      expect(res.stdout).toBe('');
    },
  );
});

describe('the command line itself', () => {
  it('answers an unknown command with exit 2 and the help', async () => {
    const res = await cliProcess('frobnicate');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/frobnicate/);
    expect(res.stderr).toMatch(/plauder keys create/);
    expect(res.stderr).toMatch(/plauder usage/);
  });

  it('answers an unknown keys subcommand with exit 2 and the usage', async () => {
    const res = await cli('keys', 'explode');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/usage: plauder keys/i);
  });

  it('lists every configuration problem at once and exits 2', async () => {
    const env = {
      ...server.env,
      PLAUDER_PLANS: 'standard=abc',
      PLAUDER_QUOTA_TIMEZONE: 'Mars/Base',
    };
    // The executable for one command, the command line in this process for the other.
    for (const run of [
      () => runCli(['keys', 'list'], env),
      () => runCliInProcess(['usage'], env),
    ]) {
      const res = await run();
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/PLAUDER_PLANS/);
      expect(res.stderr).toMatch(/PLAUDER_QUOTA_TIMEZONE/);
      expect(res.stderr).toMatch(/Mars\/Base/);
      expect(res.stdout).toBe('');
    }
  });
});
