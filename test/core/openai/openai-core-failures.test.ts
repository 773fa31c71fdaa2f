import { describe, expect } from 'vitest';
import { CoreError, type CoreRequest } from '../../../src/core/core-adapter.js';
import { test } from './openai-test.js';
import { deadPort, type Upstream } from './upstream-process.js';

function ask(message = 'Hallo', signal = new AbortController().signal): CoreRequest {
  return { message, language: 'de', history: [], signal };
}

async function failure(promise: Promise<unknown>): Promise<CoreError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof CoreError)) throw new Error(`expected a CoreError, got ${String(error)}`);
  return error;
}

const requestCount = async (upstream: Upstream) => (await upstream.received()).requests.length;

describe('openai core: timeouts', () => {
  test('fails with core_timeout when an attempt hangs past the timeout, in bounded time', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({ hang: true });
    const started = performance.now();
    const error = await failure(openCore({ timeoutMs: 300, maxRetries: 0 }).reply(ask()));
    const elapsed = performance.now() - started;

    expect(error.code).toBe('core_timeout');
    expect(error.message).toContain('300ms');
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(2_000);
  });

  test('never asks the one upstream again after a timeout: a slow answer is not generated twice', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({ hang: true }, { content: 'zu spät' });
    const error = await failure(openCore({ timeoutMs: 200, maxRetries: 2 }).reply(ask()));

    expect(error.code).toBe('core_timeout');
    expect(error.message).toContain('attempt 1 of 3');
    expect(await requestCount(upstream)).toBe(1);
  });
});

describe('openai core: retries', () => {
  test.for([500, 502, 503, 504, 429, 408])(
    'retries HTTP %i and returns the next reply',
    async (status, { upstream, openCore }) => {
      await upstream.script({ status, body: { error: { message: 'busy' } } }, { content: 'Da.' });
      await expect(openCore().reply(ask())).resolves.toBe('Da.');
      expect(await requestCount(upstream)).toBe(2);
    },
  );

  test('gives up with core_unavailable after exactly 1 + maxRetries attempts', async ({
    upstream,
    openCore,
  }) => {
    const busy = { status: 500, body: { error: { message: 'down' } } };
    await upstream.script(busy, busy, busy, busy, busy);
    const error = await failure(openCore({ maxRetries: 3 }).reply(ask()));

    expect(error.code).toBe('core_unavailable');
    expect(error.message).toContain('HTTP 500');
    expect(error.message).toContain('attempt 4 of 4');
    expect(await requestCount(upstream)).toBe(4);
  });

  test('makes a single attempt with maxRetries 0', async ({ upstream, openCore }) => {
    await upstream.script({ status: 503, body: {} }, { content: 'nope' });
    expect((await failure(openCore({ maxRetries: 0 }).reply(ask()))).code).toBe('core_unavailable');
    expect(await requestCount(upstream)).toBe(1);
  });

  test('waits as long as Retry-After asks (in seconds) before retrying a 429', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({ status: 429, headers: { 'retry-after': '1' }, body: {} }, {});
    const started = performance.now();
    await openCore({ retryMaxDelayMs: 5_000 }).reply(ask());
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(await requestCount(upstream)).toBe(2);
  });

  test('caps a long Retry-After at the maximum retry delay', async ({ upstream, openCore }) => {
    await upstream.script({ status: 429, headers: { 'retry-after': '3600' }, body: {} }, {});
    const started = performance.now();
    await openCore({ retryMaxDelayMs: 100 }).reply(ask());
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(await requestCount(upstream)).toBe(2);
  });

  test.for([400, 401, 403, 404, 422])(
    'does not retry HTTP %i',
    async (status, { upstream, openCore }) => {
      await upstream.script({ status, body: { error: { message: 'no' } } }, { content: 'nope' });
      const error = await failure(openCore({ maxRetries: 5 }).reply(ask()));
      expect(error.code).toBe('core_unavailable');
      expect(error.message).toContain(`HTTP ${status}`);
      expect(error.message).toContain('not retried');
      expect(await requestCount(upstream)).toBe(1);
    },
  );

  test('retries when the upstream closes the connection without answering', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({ close: true }, { content: 'Wieder da.' });
    await expect(openCore().reply(ask())).resolves.toBe('Wieder da.');
    expect(await requestCount(upstream)).toBe(2);
  });

  test('fails with core_unavailable on a dead port after all attempts, quickly', async ({
    openCore,
  }) => {
    const port = await deadPort();
    const core = openCore({ maxRetries: 2 }, `http://127.0.0.1:${port}/v1`);
    const started = performance.now();
    const error = await failure(core.reply(ask()));

    expect(error.code).toBe('core_unavailable');
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('attempt 3 of 3');
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  test('refuses a reply larger than 4 MiB at once, without retrying', async ({
    upstream,
    openCore,
  }) => {
    const huge = JSON.stringify({
      choices: [{ message: { content: 'x'.repeat(5 * 1024 * 1024) } }],
    });
    await upstream.script({ raw: huge, contentType: 'application/json' }, { content: 'nope' });
    const error = await failure(openCore({ maxRetries: 3 }).reply(ask()));
    expect(error.code).toBe('core_unavailable');
    expect(error.message).toContain(`larger than ${4 * 1024 * 1024} bytes`);
    expect(await requestCount(upstream)).toBe(1);
  });

  test('fails at once, without the key, when Node refuses to build the request', async ({
    upstream,
    openCore,
  }) => {
    const error = await failure(openCore({ apiKey: 'sk-bad\nkey', maxRetries: 3 }).reply(ask()));
    expect(error.code).toBe('core_unavailable');
    expect(error.message).toContain('ERR_INVALID_CHAR');
    expect(`${error.message} ${String(error.cause)}`).not.toContain('sk-bad');
    expect(await requestCount(upstream)).toBe(0);
  });
});

describe('openai core: abort via request.signal', () => {
  test('stops a hanging attempt at once and does not retry', async ({ upstream, openCore }) => {
    await upstream.script({ hang: true }, { content: 'too late' });
    const controller = new AbortController();
    const pending = failure(openCore({ timeoutMs: 10_000 }).reply(ask('Hallo', controller.signal)));
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    const error = await pending;

    expect(error.code).toBe('core_timeout');
    expect(error.message).toContain('aborted by the caller (AbortError)');
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await requestCount(upstream)).toBe(1);
  });

  test('stops while waiting for a retry', async ({ upstream, openCore }) => {
    await upstream.script({ status: 429, headers: { 'retry-after': '30' }, body: {} });
    const signal = AbortSignal.timeout(200);
    const started = performance.now();
    const error = await failure(openCore({ retryMaxDelayMs: 30_000 }).reply(ask('Hallo', signal)));

    expect(error.code).toBe('core_timeout');
    expect(error.message).toContain('(TimeoutError) while waiting to retry');
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(await requestCount(upstream)).toBe(1);
  });

  test('sends nothing when the signal is already aborted', async ({ upstream, openCore }) => {
    const error = await failure(openCore().reply(ask('Hallo', AbortSignal.abort())));
    expect(error.code).toBe('core_timeout');
    expect(await requestCount(upstream)).toBe(0);
  });
});

describe('openai core: error messages stay free of secrets', () => {
  const KEY = 'sk-live-KEEP-THIS-SECRET-0123456789';
  const MESSAGE = 'mein geheimes Passwort ist hunter2';
  const UPSTREAM_TEXT = 'UPSTREAM-INTERNAL-DETAIL';
  const scenarios = [
    ['401 with a body', [{ status: 401, body: { error: { message: UPSTREAM_TEXT } } }]],
    ['500s', Array(3).fill({ status: 500, raw: UPSTREAM_TEXT })],
    ['HTML with 200', [{ raw: `<h1>${UPSTREAM_TEXT}</h1>` }]],
    ['bad shape', [{ body: { choices: [{ message: { content: { text: UPSTREAM_TEXT } } }] } }]],
    ['timeouts', Array(3).fill({ hang: true })],
    ['closed sockets', Array(3).fill({ close: true })],
  ] as const;

  test.for(scenarios)(
    'never puts key, message or upstream text into errors: %s',
    async ([_l, steps], { upstream, openCore }) => {
      await upstream.script(...steps);
      const error = await failure(openCore({ apiKey: KEY, timeoutMs: 200 }).reply(ask(MESSAGE)));
      const visible = `${error.message} ${String(error.cause)} ${error.stack ?? ''}`;
      for (const secret of [KEY, MESSAGE, UPSTREAM_TEXT, 'hunter2']) {
        expect(visible).not.toContain(secret);
      }
    },
  );
});
