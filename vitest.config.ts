import fs from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * The test files that run on a database of the project's dialect: those that import
 * test/helpers/test-database.ts (which picks the dialect), directly or through other test
 * modules. The others never open a database (parsers, the cores against their fixtures,
 * month arithmetic), or only a SQLite file of their own whatever the project (the CLI's
 * usage errors, `kb check` / `ask`, the SQLite file's own checks): the dialect changes
 * nothing for them, so they run in the sqlite project only, and a new test file of that
 * kind does too without being listed anywhere.
 */
function filesOnTheTestDatabase(): string[] {
  const target = path.resolve('test/helpers/test-database.ts');
  const imports = (file: string): string[] =>
    [...fs.readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)]
      .map((match) => path.resolve(path.dirname(file), String(match[1]).replace(/\.js$/, '.ts')))
      .filter((imported) => imported.endsWith('.ts') && fs.existsSync(imported));
  const reachesTarget = (file: string): boolean => {
    const seen = new Set([file]);
    for (const next of seen) {
      if (next === target) return true;
      for (const imported of imports(next)) seen.add(imported);
    }
    return false;
  };
  return fs
    .readdirSync('test', { recursive: true, encoding: 'utf8' })
    .map((name) => path.join('test', name))
    .filter((file) => file.endsWith('.test.ts') && reachesTarget(path.resolve(file)))
    .sort();
}

/**
 * Tests whose subject is not the storage, though they run on a database: the console in a
 * browser, generated requests against the contract's answers, a failing upstream process
 * under load, the official OpenAI client against `/v1`, the OpenAPI document against the
 * answers. What they store (keys, counts, refunds, sessions) is tested on both dialects
 * by the tests of those rules, so they run in the sqlite project only.
 */
const DIALECT_NEUTRAL = [
  'test/admin/console.browser.test.ts',
  'test/reliability/fuzz.test.ts',
  'test/reliability/upstream-faults.test.ts',
  'test/v1/openai-sdk.test.ts',
  'test/v1/agent-clients.test.ts',
  'test/v1/dead-upstream-clients.test.ts',
  'test/v1/responses-openai-sdk.test.ts',
  'test/v1/responses-agents.test.ts',
  'test/v1/messages/anthropic-clients.test.ts',
  'test/ops/openapi-truth.test.ts',
];

/**
 * The whole suite runs twice: on SQLite and on PostgreSQL (each test server creates and
 * drops a database of its own; see test/helpers/test-database.ts), except the tests that
 * never touch the test database and those whose subject is not the storage.
 * `vitest run --project sqlite` runs one of them.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // The test process's fetch leaves idle connections before the server does (see the file).
    setupFiles: ['test/helpers/test-client.ts'],
    // A worker keeps the modules it imported for its next file: importing the app's graph
    // (Fastify, Kysely, the MCP SDK) through Vite once per file was a third of the suite's
    // CPU. Every file starts its own servers and databases and restores what it changes,
    // and each project (dialect) has workers of its own.
    isolate: false,
    // Most tests wait on child processes, sockets and timers: three files at a time keep two
    // cores busy.
    maxWorkers: 3,
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          // PostgreSQL-only: several instances, outages of the database server.
          exclude: ['test/postgres/**'],
          env: { PLAUDER_TEST_DIALECT: 'sqlite' },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: filesOnTheTestDatabase(),
          // SQLite-only: the SQLite file's own mechanics and faults (checkpoints, the direct
          // statement runner, a held write lock, a full disk).
          exclude: [
            ...DIALECT_NEUTRAL,
            'test/storage/sqlite-*.test.ts',
            'test/reliability/sqlite-faults.test.ts',
          ],
          env: { PLAUDER_TEST_DIALECT: 'postgres' },
          globalSetup: ['test/helpers/postgres-setup.ts'],
        },
      },
    ],
  },
});
