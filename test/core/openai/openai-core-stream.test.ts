/**
 * The openai core streams from its upstream (a real process that streams as OpenAI does):
 * each token is passed on as it arrives, the upstream's usage is read, the first token and
 * the gaps between tokens have time limits, failures before the first token are retried and
 * after it end the stream, and an abort or an early stop aborts the upstream request at once.
 */
import { describe, expect } from 'vitest';
import { type CoreChunk, CoreError, type CoreRequest } from '../../../src/core/core-adapter.js';
import { test } from './openai-test.js';
import { releaseWhenSeen, type Upstream } from './upstream-process.js';

function ask(overrides: Partial<CoreRequest> = {}): CoreRequest {
  return {
    message: 'Hallo',
    language: 'de',
    history: [],
    signal: new AbortController().signal,
    ...overrides,
  };
}

interface Collected {
  chunks: { chunk: CoreChunk }[];
  error?: unknown;
}

async function collect(
  stream: AsyncIterable<CoreChunk> | undefined,
  onChunk?: (chunk: CoreChunk) => void,
): Promise<Collected> {
  if (!stream) throw new Error('the openai core has no stream()');
  const collected: Collected = { chunks: [] };
  try {
    for await (const chunk of stream) {
      collected.chunks.push({ chunk });
      onChunk?.(chunk);
    }
  } catch (error) {
    collected.error = error;
  }
  return collected;
}

const deltas = (collected: Collected) =>
  collected.chunks.flatMap(({ chunk }) => (chunk.type === 'delta' ? [chunk.text] : []));

async function lastRequest(upstream: Upstream) {
  const { requests } = await upstream.received();
  const last = requests.at(-1);
  if (!last) throw new Error('the upstream received nothing');
  return last;
}

async function untilAborted(upstream: Upstream): Promise<number> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const abortedAt = (await lastRequest(upstream)).abortedAt;
    if (abortedAt !== undefined) return abortedAt;
    if (Date.now() > deadline) throw new Error('the upstream never saw its request aborted');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('openai core: streamed replies', () => {
  test('passes each token on as it arrives, before the upstream has finished', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({
      stream: { pieces: ['Guten ', 'Tag, ', 'wie ', 'geht ', 'es?'], holdAfter: 1 },
    });
    // The upstream holds 'Tag, ' and the rest back until the first delta has come out.
    const held = releaseWhenSeen(upstream);
    const collected = await collect(openCore().stream?.(ask()), (chunk) => {
      if (chunk.type === 'delta') held.seen();
    });

    expect(collected.error).toBeUndefined();
    expect(held.seenWhileHeld).toBe(true);
    expect(deltas(collected)).toEqual(['Guten ', 'Tag, ', 'wie ', 'geht ', 'es?']);
  });

  test("asks for a stream with usage and reads the upstream's token counts", async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({
      stream: { usage: { prompt_tokens: 31, completion_tokens: 4 } },
    });
    const collected = await collect(openCore().stream?.(ask()));

    // The usage chunk also names the model that answered (for the attempt's trace span).
    expect(collected.chunks.at(-1)?.chunk).toEqual({
      type: 'usage',
      promptTokens: 31,
      completionTokens: 4,
      model: 'test-model',
    });
    expect(deltas(collected).join('')).toBe('reply to: Hallo');
    const body = (await lastRequest(upstream)).body as Record<string, unknown>;
    expect(body.stream).toBe(true);
    expect(body.stream_options).toEqual({ include_usage: true });
  });

  test("sends the client's instructions after the operator's prompt, and its sampling", async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({});
    const request = ask({
      instructions: ['Sei knapp.'],
      history: [{ message: 'Hi', reply: 'Hallo!', language: 'de' }],
      sampling: { temperature: 0.2, topP: 0.9, maxTokens: 50, stop: ['\n\n'], user: 'u-1' },
    });
    await collect(openCore({ maxTokens: 20 }).stream?.(request));

    const body = (await lastRequest(upstream)).body as Record<string, unknown>;
    expect(body.messages).toEqual([
      { role: 'system', content: 'Antworte auf Deutsch.' },
      { role: 'system', content: 'Sei knapp.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hallo!' },
      { role: 'user', content: 'Hallo' },
    ]);
    expect(body).toMatchObject({
      temperature: 0.2,
      top_p: 0.9,
      max_tokens: 20,
      stop: ['\n\n'],
      user: 'u-1',
    });
  });

  test('retries a failure before the first token, with the next attempt streaming', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script(
      { status: 503, body: { error: { message: 'busy' } } },
      { stream: { breakAfter: 0 } },
      { content: 'Jetzt aber.' },
    );
    const collected = await collect(openCore().stream?.(ask()));

    expect(collected.error).toBeUndefined();
    expect(deltas(collected).join('')).toBe('Jetzt aber.');
    expect((await upstream.received()).requests).toHaveLength(3);
  });

  test('ends with core_unavailable, unretried, when the stream breaks off after a token', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({
      stream: { pieces: ['Eins ', 'zwei ', 'drei'], breakAfter: 2 },
    });
    const collected = await collect(openCore().stream?.(ask()));

    expect(deltas(collected)).toEqual(['Eins ', 'zwei ']);
    expect(collected.error).toBeInstanceOf(CoreError);
    expect((collected.error as CoreError).code).toBe('core_unavailable');
    expect((await upstream.received()).requests).toHaveLength(1);
  });

  test('fails a stream that ends with neither a finish reason nor [DONE] (cut off) as core_unavailable', async ({
    upstream,
    openCore,
  }) => {
    const options = { maxRetries: 0 };
    await upstream.script({
      stream: { pieces: ['a ', 'b'], noDone: true, noFinish: true },
    });
    const collected = await collect(openCore(options).stream?.(ask()));

    expect(deltas(collected)).toEqual(['a ', 'b']);
    expect((collected.error as CoreError).code).toBe('core_unavailable');
  });

  test('takes a stream that ends with its finish reason but without [DONE], as some servers send', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({ stream: { pieces: ['a ', 'b'], noDone: true } });
    const collected = await collect(openCore({ maxRetries: 0 }).stream?.(ask()));

    expect(deltas(collected)).toEqual(['a ', 'b']);
    expect(collected.error).toBeUndefined();
  });

  test('times out waiting for the first token and aborts the upstream request', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({ stream: { firstTokenMs: 10_000 } });
    const options = { firstTokenTimeoutMs: 250, maxRetries: 0 };
    const started = performance.now();
    const collected = await collect(openCore(options).stream?.(ask()));

    expect((collected.error as CoreError).code).toBe('core_timeout');
    expect((collected.error as CoreError).message).toContain('first token');
    expect(performance.now() - started).toBeLessThan(2_000);
    await untilAborted(upstream);
  });

  test('times out on a gap between tokens, after passing on what came', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({ stream: { pieces: ['Ein ', 'Satz'], hangAfter: 1 } });
    const collected = await collect(openCore({ tokenGapTimeoutMs: 250 }).stream?.(ask()));

    expect(deltas(collected)).toEqual(['Ein ']);
    expect((collected.error as CoreError).code).toBe('core_timeout');
    expect((collected.error as CoreError).message).toContain('between tokens');
    expect((await upstream.received()).requests).toHaveLength(1);
    await untilAborted(upstream);
  });

  test('aborts the upstream request at once when the signal fires mid-stream', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({ stream: { pieces: ['a ', 'b ', 'c'], gapMs: 5_000 } });
    const controller = new AbortController();
    const stream = openCore().stream?.(ask({ signal: controller.signal }));
    if (!stream) throw new Error('no stream()');
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value).toEqual({ type: 'delta', text: 'a ' });
    const abortedAt = Date.now();
    controller.abort(new Error('client gone'));
    await expect(iterator.next()).rejects.toMatchObject({ code: 'core_timeout' });
    expect((await untilAborted(upstream)) - abortedAt).toBeLessThan(1_000);
  });

  test('aborts the upstream request when the consumer stops reading', async ({
    upstream,
    openCore,
  }) => {
    await upstream.script({ stream: { pieces: ['a ', 'b ', 'c'], gapMs: 5_000 } });
    const stream = openCore().stream?.(ask());
    if (!stream) throw new Error('no stream()');
    for await (const chunk of stream) {
      expect(chunk).toEqual({ type: 'delta', text: 'a ' });
      break;
    }
    await untilAborted(upstream);
  });
});
