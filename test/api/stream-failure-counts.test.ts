/**
 * A streamed reply whose core fails after a part of it reached the client counts once
 * (docs/contract.md, "Streamed replies"): the stream ends with the error event, nothing is
 * stored in the session and no idempotent outcome is kept, but the delivered part is not
 * free. A failure before any delta is refunded. The real upstream process fails on purpose:
 * it breaks off at 90 %, sends a reply over the 4 MiB cap, or is too slow for the core's
 * deadline.
 */
import { describe, expect } from 'vitest';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { postStream, replyOf, type SseAnswer } from '../helpers/sse.js';
import type { TestServer } from '../helpers/test-server.js';

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

const errorCode = (answer: SseAnswer) => {
  const last = answer.events.at(-1);
  return last?.event === 'error' ? JSON.parse(last.data).error.code : undefined;
};

const TEN_PIECES = Array.from({ length: 10 }, (_, i) => `Teil${i} `);

describe('a streamed reply whose core fails after a delta reached the client', () => {
  test('an upstream that breaks off at 90 %: error event, counted once, nothing stored or kept', async ({
    serve,
    upstream,
  }) => {
    await upstream.script(
      { stream: { pieces: TEN_PIECES, breakAfter: 9 } },
      { stream: { pieces: ['Noch ', 'mal'] } },
    );
    const s = await serve({ env: openAiEnv(upstream) });
    const { id, key } = await s.createKey();
    const request = {
      key,
      headers: { 'idempotency-key': 'once-broken' },
      body: { message: 'Erzähl', sessionId: 'broken' },
    };
    const answer = await postStream(`${s.url}/api/chat`, request);

    expect(answer.events.filter((e) => e.event === 'delta')).toHaveLength(9);
    expect(errorCode(answer)).toBe('core_unavailable');
    expect(replyOf(answer).done).toBeUndefined();
    expect(await used(s, id)).toBe(1);
    expect(await s.services.sessions.read(id, 'broken', Date.now())).toBeUndefined();
    const line = s.logs.map((l) => JSON.parse(l)).find((l) => l.msg === 'request');
    expect(line).toMatchObject({ outcome: 'failed', keyId: id });

    // Nothing was kept for the key: its retry runs afresh, and counts when it delivers.
    const retry = await postStream(`${s.url}/api/chat`, request);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(replyOf(retry).done).toBe('Noch mal');
    expect(await used(s, id)).toBe(2);
  });

  test('a reply over the 4 MiB cap, cut off after MBs were delivered: counted once', async ({
    serve,
    upstream,
  }) => {
    // 2 400 pieces of 2 000 letters: 4.8 MB of text, more than the upstream reply cap.
    await upstream.script({ stream: { large: { pieces: 2400, pieceChars: 2000 } } });
    const s = await serve({ env: openAiEnv(upstream) });
    const { id, key } = await s.createKey();
    const answer = await postStream(`${s.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', stream: true, messages: [{ role: 'user', content: 'Viel' }] },
    });

    const delivered = answer.events
      .map((e) => JSON.parse(e.data))
      .reduce((sum, chunk) => sum + (chunk.choices?.[0]?.delta?.content?.length ?? 0), 0);
    expect(delivered).toBeGreaterThan(3_000_000);
    expect(JSON.parse(answer.events.at(-1)?.data ?? '{}').error?.code).toBe('core_unavailable');
    expect(answer.text).not.toContain('[DONE]');
    expect(await used(s, id)).toBe(1);
  });

  test("the core's deadline passing mid-stream (PLAUDER_CORE_TIMEOUT short so that it passes after a few pieces): counted once", async ({
    serve,
    upstream,
  }) => {
    // A piece every 100 ms for 10 s: the 1 s deadline passes long before the end.
    const pieces = Array.from({ length: 100 }, (_, i) => `Wort${i} `);
    await upstream.script({ stream: { pieces, gapMs: 100 } });
    const s = await serve({ env: openAiEnv(upstream, { PLAUDER_CORE_TIMEOUT: '1s' }) });
    const { id, key } = await s.createKey();
    const answer = await postStream(`${s.url}/api/chat`, {
      key,
      body: { message: 'Zähl', sessionId: 'late' },
    });

    expect(answer.events.filter((e) => e.event === 'delta').length).toBeGreaterThan(0);
    expect(errorCode(answer)).toBe('core_timeout');
    expect(await used(s, id)).toBe(1);
    expect(await s.services.sessions.read(id, 'late', Date.now())).toBeUndefined();
  });

  test('a failure before any delta is refunded', async ({ serve, upstream }) => {
    await upstream.script({ stream: { pieces: TEN_PIECES, breakAfter: 0 } });
    const s = await serve({ env: openAiEnv(upstream) });
    const { id, key } = await s.createKey();
    const answer = await postStream(`${s.url}/api/chat`, { key, body: { message: 'Erzähl' } });

    expect(answer.events.map((e) => e.event)).toEqual(['error']);
    expect(errorCode(answer)).toBe('core_unavailable');
    expect(await used(s, id)).toBe(0);
  });
});
