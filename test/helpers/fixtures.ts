/**
 * What many test files start and stop the same way, as vitest fixtures (`test.extend`): a
 * test names what it needs in its arguments and gets it stopped after it, instead of each
 * file keeping its own start helpers and cleanup list.
 *
 * - `upstream` and `rasaBot`: the fake upstream processes, one per worker, reset before each
 *   test (see process-fixtures.ts, which tests without a server import instead).
 * - `serve`: starts test servers (test-server.ts) that are closed when the test ends.
 *
 * File-scoped fixtures (a server shared by the tests of one file) build on the worker's
 * `upstreamProcess` / `rasaBotProcess`; a test that uses them still asks for `upstream` /
 * `rasaBot`, which resets them before it.
 */
import type { Upstream } from '../core/openai/upstream-process.js';
import type { RasaBot } from '../core/rasa/rasa-bot-process.js';
import { test as base } from './process-fixtures.js';
import { startTestServer, type TestServer, type TestServerOptions } from './test-server.js';

export const test = base.extend('serve', async ({ onTestFinished }) => {
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

export interface OpenAiEnvOptions {
  /**
   * `off` (default): no retries, so the answer a test scripts is the answer the server gets.
   * `shipped`: the retry count the service ships with, for tests whose point is that
   * clients on their default settings work against a server on its defaults (or that a
   * retry cannot slip past what they check: a client that left is not asked again).
   */
  readonly retries?: 'off' | 'shipped';
}

/** A server's settings for the OpenAI core in front of `upstream`; `settings` come last. */
export function openAiEnv(
  upstream: Upstream,
  settings: Record<string, string> = {},
  { retries = 'off' }: OpenAiEnvOptions = {},
): Record<string, string> {
  return {
    PLAUDER_CORE: 'openai',
    PLAUDER_OPENAI_BASE_URL: upstream.baseUrl,
    PLAUDER_OPENAI_MODEL: 'test-model',
    ...(retries === 'off' ? { PLAUDER_OPENAI_MAX_RETRIES: '0' } : {}),
    ...settings,
  };
}

/** A server's settings for the Rasa core in front of `bot`; `settings` come last. */
export function rasaEnv(
  bot: RasaBot,
  settings: Record<string, string> = {},
): Record<string, string> {
  return { PLAUDER_CORE: 'rasa', PLAUDER_RASA_URL: bot.url, ...settings };
}
