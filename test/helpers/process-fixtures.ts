/**
 * The fake upstream processes as vitest fixtures, for tests with or without a server
 * (fixtures.ts adds the servers; a test file that imports this one alone does not reach
 * the test database, so it runs in the sqlite project only, see vitest.config.ts).
 *
 * - `upstream`: the fake OpenAI upstream process (test/fixtures/openai-upstream.mjs). One
 *   process serves every test of a worker, reset before each test (steps, recorded
 *   requests, held streams). A test that stops, kills or restarts an upstream starts one of
 *   its own with `startUpstream`: the shared one must outlive it.
 * - `rasaBot`: the fake Rasa bot process (test/fixtures/rasa-bot.mjs), the same way: one per
 *   worker, reset before each test (steps and recorded requests). Tests that need a bot of
 *   another name, or two bots, start their own with `startRasaBot`.
 *
 * Tests that run at the same time (`describe.concurrent`) share the worker's processes: at
 * most one of them may take `upstream` (or `rasaBot`), whose reset would clear the other's.
 */
import { test as base } from 'vitest';
import { startUpstream } from '../core/openai/upstream-process.js';
import { type RasaBot, startRasaBot } from '../core/rasa/rasa-bot-process.js';

export const test = base
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern, and this one has none
  .extend('upstreamProcess', { scope: 'worker' }, async ({}, { onCleanup }) => {
    const upstream = await startUpstream();
    onCleanup(() => upstream.stop());
    return upstream;
  })
  .extend('upstream', async ({ upstreamProcess }) => {
    await upstreamProcess.reset();
    return upstreamProcess;
  })
  // biome-ignore lint/correctness/noEmptyPattern: as above
  .extend('rasaBotProcess', { scope: 'worker' }, async ({}, { onCleanup }) => {
    const bot = await startRasaBot();
    onCleanup(() => bot.stop());
    return bot;
  })
  .extend('rasaBot', async ({ rasaBotProcess }): Promise<RasaBot> => {
    await rasaBotProcess.reset();
    return rasaBotProcess;
  });
