import { describe, expect } from 'vitest';
import { CoreError } from '../../../src/core/core-adapter.js';
import { deadPort } from '../../helpers/fixture-process.js';
import { ask, type RasaBot, rejection, until } from './rasa-bot-process.js';
import { test } from './rasa-test.js';

async function failure(promise: Promise<unknown>): Promise<CoreError> {
  const error = await rejection(promise);
  if (!(error instanceof CoreError)) throw new Error(`expected a CoreError, got ${String(error)}`);
  return error;
}

const requestCount = async (bot: RasaBot) => (await bot.requests()).length;

describe('rasa core: a slow bot', () => {
  test('fails with core_timeout when every attempt outlasts the timeout, in bounded time', async ({
    rasaBot,
    openCore,
  }) => {
    await rasaBot.script({ delayMs: 1_000 }, { delayMs: 1_000 });
    const started = performance.now();
    const error = await failure(openCore({ timeoutMs: 200, maxRetries: 1 }).reply(ask('x')));
    const elapsed = performance.now() - started;

    expect(error.code).toBe('core_timeout');
    expect(error.message).toBe('rasa core: no complete reply within 200ms (attempt 2 of 2)');
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(2 * 200 + 50 + 1_000);
    expect(await requestCount(rasaBot)).toBe(2);
  });

  test('answers when the bot is slow but inside the timeout', async ({ rasaBot, openCore }) => {
    await rasaBot.script({ delayMs: 150, messages: [{ text: 'Gemach.' }] });
    await expect(openCore({ timeoutMs: 1_000 }).reply(ask('x'))).resolves.toBe('Gemach.');
  });
});

describe('rasa core: a failing bot', () => {
  test.for([500, 502, 503, 504])(
    'retries HTTP %i and returns the next answer',
    async (status, { rasaBot, openCore }) => {
      await rasaBot.script({ status, body: { error: 'busy' } }, { messages: [{ text: 'Da.' }] });
      await expect(openCore().reply(ask('x'))).resolves.toBe('Da.');
      expect(await requestCount(rasaBot)).toBe(2);
    },
  );

  test('gives up with core_unavailable after 1 + maxRetries 5xx answers', async ({
    rasaBot,
    openCore,
  }) => {
    const down = { status: 500, raw: 'Internal Server Error' };
    await rasaBot.script(down, down, down, { messages: [{ text: 'too late' }] });
    const error = await failure(openCore({ maxRetries: 2 }).reply(ask('x')));

    expect(error.code).toBe('core_unavailable');
    expect(error.message).toBe('rasa core: upstream answered HTTP 500 (attempt 3 of 3)');
    expect(await requestCount(rasaBot)).toBe(3);
  });

  test('does not retry a 404 and names what to check', async ({ rasaBot, openCore }) => {
    await rasaBot.script({ status: 404, body: { status: 'failure' } });
    const error = await failure(openCore({ maxRetries: 3 }).reply(ask('x')));
    expect(error.code).toBe('core_unavailable');
    expect(error.message).toContain('not retried; check PLAUDER_RASA_URL');
    expect(await requestCount(rasaBot)).toBe(1);
  });

  test('retries when the bot drops the connection without answering', async ({
    rasaBot,
    openCore,
  }) => {
    await rasaBot.script({ close: true }, { messages: [{ text: 'Wieder da.' }] });
    await expect(openCore().reply(ask('x'))).resolves.toBe('Wieder da.');
    expect(await requestCount(rasaBot)).toBe(2);
  });

  test('fails with core_unavailable when nothing listens, after all attempts', async ({
    openCore,
  }) => {
    const core = openCore({ maxRetries: 1 }, `http://127.0.0.1:${await deadPort()}`);
    const error = await failure(core.reply(ask('x')));
    expect(error.code).toBe('core_unavailable');
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('attempt 2 of 2');
  });

  test('fails with core_unavailable after close()', async ({ rasaBot, openCore }) => {
    const core = openCore();
    await core.close?.();
    expect((await failure(core.reply(ask('x')))).code).toBe('core_unavailable');
    expect(await requestCount(rasaBot)).toBe(0);
  });

  test('never puts the message or the bot text into errors', async ({ rasaBot, openCore }) => {
    const secret = 'mein Passwort ist hunter2';
    await rasaBot.script(
      { status: 500, raw: 'BOT-INTERNAL-DETAIL' },
      { raw: '<p>BOT-INTERNAL-DETAIL</p>' },
    );
    const error = await failure(openCore({ maxRetries: 1 }).reply(ask(secret)));
    const visible = `${error.message} ${String(error.cause)} ${error.stack ?? ''}`;
    expect(visible).not.toMatch(/hunter2|Passwort|BOT-INTERNAL-DETAIL/);
  });
});

describe('rasa core: cancellation', () => {
  test('aborts the request to the bot as soon as the signal fires; the bot sees it closed', async ({
    rasaBot,
    openCore,
  }) => {
    await rasaBot.script({ hang: true }, { messages: [{ text: 'too late' }] });
    const controller = new AbortController();
    const pending = failure(
      openCore({ timeoutMs: 30_000 }).reply(ask('x', { signal: controller.signal })),
    );
    // Abort once the bot holds the request, not before it was sent.
    expect(await until(async () => (await requestCount(rasaBot)) === 1)).toBe(true);
    const aborted = performance.now();
    controller.abort();
    const error = await pending;

    expect(error.code).toBe('core_timeout');
    expect(error.message).toContain('aborted by the caller (AbortError)');
    expect(performance.now() - aborted).toBeLessThan(500);
    const closed = async () => (await rasaBot.requests())[0]?.closedEarly === true;
    expect(await until(closed, 1_000)).toBe(true);
    expect(performance.now() - aborted).toBeLessThan(1_000);
    expect(await requestCount(rasaBot)).toBe(1);
  });

  test('stops waiting for a retry when the signal fires', async ({ rasaBot, openCore }) => {
    await rasaBot.script({ status: 503, headers: { 'retry-after': '30' }, raw: '' });
    const signal = AbortSignal.timeout(150);
    const core = openCore({ retryMaxDelayMs: 20_000 });
    const started = performance.now();
    const error = await failure(core.reply(ask('x', { signal })));
    expect(error.code).toBe('core_timeout');
    expect(error.message).toContain('while waiting to retry');
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  test('sends nothing when the signal has already fired', async ({ rasaBot, openCore }) => {
    const error = await failure(openCore().reply(ask('x', { signal: AbortSignal.abort() })));
    expect(error.code).toBe('core_timeout');
    expect(await requestCount(rasaBot)).toBe(0);
  });
});
