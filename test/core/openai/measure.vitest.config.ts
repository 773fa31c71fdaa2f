import { defineConfig } from 'vitest/config';

/**
 * Runs the latency measurement, which is kept out of `npm test` because it reports numbers
 * instead of asserting them: `npx vitest run -c test/core/openai/measure.vitest.config.ts`
 */
export default defineConfig({
  test: {
    include: ['test/core/openai/**/*.measure.ts'],
    testTimeout: 300_000,
    pool: 'forks',
  },
});
