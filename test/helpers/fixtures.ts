/**
 * What many test files start and stop the same way, as vitest fixtures (`test.extend`): a
 * test names what it needs in its arguments and gets it stopped after it, instead of each
 * file keeping its own start helpers and cleanup list.
 *
 * - `upstream`: the fake OpenAI upstream process (test/fixtures/openai-upstream.mjs). One
 *   process serves every test of a worker, reset before each test (steps, recorded
 *   requests, held streams): a test that stops, kills or restarts an upstream starts one of
 *   its own with `startUpstream`.
 * - `serve`: starts test servers (test-server.ts) that are closed when the test ends.
 */
import { test as base } from 'vitest';
import { startUpstream, type Upstream } from '../core/openai/upstream-process.js';
import { startTestServer, type TestServer, type TestServerOptions } from './test-server.js';

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
  .extend('serve', async ({ onTestFinished }) => {
    const servers: TestServer[] = [];
    onTestFinished(async () => {
      for (const server of servers.reverse()) await server.close().catch(() => {});
    });
    return async (options: TestServerOptions = {}): Promise<TestServer> => {
      const server = await startTestServer(options);
      servers.push(server);
      return server;
    };
  });

/**
 * A server's settings for the OpenAI core in front of `upstream`, without retries: the
 * answer a test scripts is the answer the server gets.
 */
export function openAiEnv(
  upstream: Upstream,
  settings: Record<string, string> = {},
): Record<string, string> {
  return {
    PLAUDER_CORE: 'openai',
    PLAUDER_OPENAI_BASE_URL: upstream.baseUrl,
    PLAUDER_OPENAI_MODEL: 'test-model',
    PLAUDER_OPENAI_MAX_RETRIES: '0',
    ...settings,
  };
}
