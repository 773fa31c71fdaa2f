import { describe, expect } from 'vitest';
import type { CoreRequest } from '../../../src/core/core-adapter.js';
import { test } from './openai-test.js';

function ask(message: string): CoreRequest {
  return { message, language: 'en', history: [], signal: new AbortController().signal };
}

/** A pause between two requests, as on a service that is not under load. */
const idle = () => new Promise((resolve) => setTimeout(resolve, 5));

async function until(check: () => Promise<boolean>, timeoutMs = 2_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

describe('openai core: connection pooling', () => {
  test('sends many back-to-back requests over at most two keep-alive sockets', async ({
    upstream,
    openCore,
  }) => {
    // undici frees a connection a moment after its reply has been read, so a request sent
    // in the same breath may take a second one; it never opens one per request.
    const adapter = openCore();
    for (let i = 0; i < 50; i++) {
      await expect(adapter.reply(ask(`message ${i}`))).resolves.toBe(`reply to: message ${i}`);
    }
    const { requests, sockets } = await upstream.received();
    expect(requests).toHaveLength(50);
    expect(sockets).toBeLessThanOrEqual(2);
  });

  test('keeps one warm socket for requests that come one at a time', async ({
    upstream,
    openCore,
  }) => {
    const adapter = openCore();
    for (let i = 0; i < 20; i++) {
      await expect(adapter.reply(ask(`message ${i}`))).resolves.toBe(`reply to: message ${i}`);
      await idle();
    }
    expect((await upstream.received()).sockets).toBe(1);
  });

  test('opens no more sockets than maxConnections under concurrency', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script(...Array(12).fill({ delayMs: 30 }));
    const adapter = openCore({ maxConnections: 3 });
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => adapter.reply(ask(`parallel ${i}`))),
    );
    expect(replies).toEqual(Array.from({ length: 12 }, (_, i) => `reply to: parallel ${i}`));
    expect((await upstream.received()).sockets).toBe(3);
  });

  test('resends at once on a fresh socket when a pooled socket turns out closed', async ({
    upstream,
    openCore,
  }) => {
    // The 2nd request reuses the 1st one's socket, which the upstream then drops unanswered,
    // as a server does when its idle timeout races our write. No retry budget is spent.
    await upstream.script({ content: 'eins' }, { close: true }, { content: 'zwei' });
    const adapter = openCore({ maxRetries: 0 });
    await expect(adapter.reply(ask('a'))).resolves.toBe('eins');
    await idle();
    await expect(adapter.reply(ask('b'))).resolves.toBe('zwei');
    const { requests, sockets } = await upstream.received();
    expect(requests).toHaveLength(3);
    expect(sockets).toBe(2);
  });

  test('close() releases the pooled sockets and later replies fail with core_unavailable', async ({
    upstream,
    openCore,
  }) => {
    const adapter = openCore();
    await adapter.reply(ask('warm up'));
    expect((await upstream.received()).openSockets).toBe(1);

    await adapter.close?.();
    expect(await until(async () => (await upstream.received()).openSockets === 0)).toBe(true);
    await expect(adapter.reply(ask('after close'))).rejects.toMatchObject({
      code: 'core_unavailable',
    });
  });
});
