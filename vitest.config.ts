import { defineConfig } from 'vitest/config';

/**
 * The whole suite runs twice: on SQLite and on PostgreSQL (each test server creates and
 * drops a database of its own; see test/helpers/test-database.ts).
 * `vitest run --project sqlite` runs one of them.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
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
          env: { PLAUDER_TEST_DIALECT: 'postgres' },
          globalSetup: ['test/helpers/postgres-setup.ts'],
        },
      },
    ],
  },
});
