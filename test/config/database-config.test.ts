import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { runCli } from '../helpers/processes.js';

const SECRET = Buffer.alloc(32, 7).toString('base64');

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('PLAUDER_DATABASE_URL', () => {
  it('defaults to a SQLite file under ./data', () => {
    const { database } = loadConfig({});
    expect(database).toEqual({
      dialect: 'sqlite',
      file: expect.stringMatching(/data\/plauder\.db$/),
    });
  });

  it('chooses PostgreSQL for postgres:// and postgresql:// URLs, with a pool of 10 by default', () => {
    for (const url of ['postgres://u:pw@db.internal:5432/plauder', 'postgresql://db/plauder']) {
      const { database } = loadConfig({ PLAUDER_DATABASE_URL: url, PLAUDER_SECRET: SECRET });
      expect(database).toEqual({ dialect: 'postgres', url, poolSize: 10 });
    }
  });

  it('takes the pool size from PLAUDER_DATABASE_POOL_SIZE and refuses nonsense', () => {
    const env = { PLAUDER_DATABASE_URL: 'postgres://db/plauder', PLAUDER_SECRET: SECRET };
    expect(loadConfig({ ...env, PLAUDER_DATABASE_POOL_SIZE: '3' }).database).toMatchObject({
      poolSize: 3,
    });
    for (const bad of ['0', '-1', 'many', '1001']) {
      expect(problemsOf({ ...env, PLAUDER_DATABASE_POOL_SIZE: bad })).toEqual([
        expect.stringMatching(/^PLAUDER_DATABASE_POOL_SIZE: expected an integer from 1 to 1000/),
      ]);
    }
  });

  it('requires PLAUDER_SECRET with PostgreSQL: every instance must seal sessions alike', () => {
    expect(problemsOf({ PLAUDER_DATABASE_URL: 'postgres://db/plauder' })).toEqual([
      expect.stringMatching(/^PLAUDER_SECRET: required with PostgreSQL/),
    ]);
  });

  it('never repeats a password from the URL in a problem', () => {
    const problems = problemsOf({ PLAUDER_DATABASE_URL: 'mysql://admin:hunter2@db/plauder' });
    expect(problems).toEqual([expect.stringMatching(/^PLAUDER_DATABASE_URL: expected sqlite:/)]);
    expect(problems.join()).not.toContain('hunter2');
    const broken = problemsOf({
      PLAUDER_DATABASE_URL: 'postgres://admin:hunter2@db:notaport/plauder',
      PLAUDER_SECRET: SECRET,
    });
    expect(broken).toEqual([expect.stringMatching(/^PLAUDER_DATABASE_URL: not a valid URL/)]);
    expect(broken.join()).not.toContain('hunter2');
  });
});

describe('PLAUDER_ADMIN_TOKEN', () => {
  it('is off unless set, and must be long and without spaces', () => {
    expect(loadConfig({}).adminToken).toBeUndefined();
    expect(loadConfig({ PLAUDER_ADMIN_TOKEN: '' }).adminToken).toBeUndefined();
    const token = 'a'.repeat(24);
    expect(loadConfig({ PLAUDER_ADMIN_TOKEN: token }).adminToken).toBe(token);
    for (const bad of ['short', `${'a'.repeat(20)} bbbb`]) {
      expect(problemsOf({ PLAUDER_ADMIN_TOKEN: bad })).toEqual([
        expect.stringMatching(/^PLAUDER_ADMIN_TOKEN: expected at least 24 characters/),
      ]);
    }
  });
});

describe('an unreachable PostgreSQL server at start-up', () => {
  it('ends the CLI with exit 1 and a message that names the database but not the password', async () => {
    const res = await runCli(['keys', 'list'], {
      // Port 1 on loopback: nothing listens there, so the connection is refused at once.
      PLAUDER_DATABASE_URL: 'postgres://plauder:hunter2@127.0.0.1:1/plauder',
      PLAUDER_SECRET: SECRET,
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /Cannot open the database postgres:\/\/\*\*\*@127\.0\.0\.1:1\/plauder: .*ECONNREFUSED/,
    );
    expect(res.stderr).not.toContain('hunter2');
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });
});
