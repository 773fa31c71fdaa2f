import { defineConfig } from 'vitest/config';

/**
 * Tests that never open a database (parsers, the cores against their fixtures, month
 * arithmetic), or only a SQLite file of their own whatever the project (the CLI's usage
 * errors, `kb check` / `ask` and the SIGHUP reload): the dialect changes nothing for them,
 * so they run in the sqlite project only.
 */
const DATABASE_FREE = [
  'test/api/event-stream.test.ts',
  'test/cli/cli-usage-errors.test.ts',
  'test/cli/knowledge-cli.test.ts',
  'test/config/**',
  'test/house/**',
  'test/keys/key-format.test.ts',
  'test/ops/metrics.test.ts',
  'test/quota/month-window.test.ts',
  'test/quota/refund-queue.test.ts',
  'test/storage/sqlite-direct-runner.test.ts',
  'test/storage/sqlite-checkpoints.test.ts',
  'test/util/**',
  'test/core/builtin/{builtin-config,conversations,knowledge-base,knowledge-truth,message-parses,properties,text}.test.ts',
  'test/core/http/**',
  'test/core/rasa/{rasa-config,rasa-core-failures,rasa-core-reply,rasa-core-request}.test.ts',
  'test/core/openai/{openai-config,openai-core-failures,openai-core-pool,openai-core-request,openai-core-stream,openai-mock-api}.test.ts',
];

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
  'test/ops/openapi-truth.test.ts',
];

/**
 * The whole suite runs twice: on SQLite and on PostgreSQL (each test server creates and
 * drops a database of its own; see test/helpers/test-database.ts), except the tests that
 * never touch a database and those whose subject is not the storage.
 * `vitest run --project sqlite` runs one of them.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
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
          include: ['test/**/*.test.ts'],
          // SQLite-only: faults of the SQLite file itself (a held write lock, a full disk).
          exclude: [...DATABASE_FREE, ...DIALECT_NEUTRAL, 'test/reliability/sqlite-faults.test.ts'],
          env: { PLAUDER_TEST_DIALECT: 'postgres' },
          globalSetup: ['test/helpers/postgres-setup.ts'],
        },
      },
    ],
  },
});
