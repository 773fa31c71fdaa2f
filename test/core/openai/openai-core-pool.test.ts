import { describe, expect, it } from 'vitest';
import type { CoreRequest } from '../../../src/core/core-adapter.js';
import { useUpstreamCore } from './upstream-process.js';

const fixture = useUpstreamCore();

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
  it('sends many back-to-back requests over at most two keep-alive sockets', async () => {
    // undici frees a connection a moment after its reply has been read, so a request sent
    // in the same breath may take a second one; it never opens one per request.
    const adapter = fixture.open();
    for (let i = 0; i < 50; i++) {
      await expect(adapter.reply(ask(`message ${i}`))).resolves.toBe(`reply to: message ${i}`);
    }
    const { requests, sockets } = await fixture.upstream.received();
    expect(requests).toHaveLength(50);
    expect(sockets).toBeLessThanOrEqual(2);
  });

  it('keeps one warm socket for requests that come one at a time', async () => {
    const adapter = fixture.open();
    for (let i = 0; i < 20; i++) {
      await expect(adapter.reply(ask(`message ${i}`))).resolves.toBe(`reply to: message ${i}`);
      await idle();
    }
    expect((await fixture.upstream.received()).sockets).toBe(1);
  });

  it('opens no more sockets than maxConnections under concurrency', async () => {
    await fixture.upstream.script(...Array(12).fill({ delayMs: 30 }));
    const adapter = fixture.open({ maxConnections: 3 });
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => adapter.reply(ask(`parallel ${i}`))),
    );
    expect(replies).toEqual(Array.from({ length: 12 }, (_, i) => `reply to: parallel ${i}`));
    expect((await fixture.upstream.received()).sockets).toBe(3);
  });

  it('resends at once on a fresh socket when a pooled socket turns out closed', async () => {
    // The 2nd request reuses the 1st one's socket, which the upstream then drops unanswered,
    // as a server does when its idle timeout races our write. No retry budget is spent.
    await fixture.upstream.script({ content: 'eins' }, { close: true }, { content: 'zwei' });
    const adapter = fixture.open({ maxRetries: 0 });
    await expect(adapter.reply(ask('a'))).resolves.toBe('eins');
    await idle();
    await expect(adapter.reply(ask('b'))).resolves.toBe('zwei');
    const { requests, sockets } = await fixture.upstream.received();
    expect(requests).toHaveLength(3);
    expect(sockets).toBe(2);
  });

  it('close() releases the pooled sockets and later replies fail with core_unavailable', async () => {
    const adapter = fixture.open();
    await adapter.reply(ask('warm up'));
    expect((await fixture.upstream.received()).openSockets).toBe(1);

    await adapter.close?.();
    expect(await until(async () => (await fixture.upstream.received()).openSockets === 0)).toBe(
      true,
    );
    await expect(adapter.reply(ask('after close'))).rejects.toMatchObject({
      code: 'core_unavailable',
    });
  });
});
