/**
 * A session's window is bounded in bytes as well as turns (docs/sessions.md; docs/contract.md,
 * "Sessions"): every part of a turn counts, the oldest turns leave first, so what the
 * upstream receives is bounded, and a turn larger than the bound alone is answered but not
 * stored, with `X-Session-Truncated: true`. A real server in front of the real upstream.
 */
import { describe, expect } from 'vitest';
import type { Upstream } from '../core/openai/upstream-process.js';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { chat, http, type TestServer } from '../helpers/test-server.js';

/** The user messages of the upstream's last request, the new one last. */
async function lastUserTexts(upstream: Upstream): Promise<string[]> {
  const last = (await upstream.received()).requests.at(-1);
  const body = last?.body as { messages: { role: string; content: unknown }[] };
  return body.messages
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

async function storedMessages(server: TestServer, key: string, sessionId: string) {
  const res = await http(`${server.url}/api/sessions/${sessionId}`, { key });
  if (res.status === 404) return [];
  return (res.json.turns as { message: string }[]).map((turn) => turn.message);
}

/** A message of `chars` characters, told apart by its first letters. */
const long = (tag: string, chars: number) => `${tag} ${'x'.repeat(chars - tag.length - 1)}`;

describe('a session window over its byte bound', () => {
  test('drops its oldest turns: the upstream receives at most the bound (PLAUDER_SESSION_MAX_BYTES=4096, so that a few turns exceed it)', async ({
    upstream,
    serve,
  }) => {
    await upstream.script(...Array.from({ length: 7 }, () => ({ content: 'ok' })));
    const server = await serve({ env: openAiEnv(upstream, { PLAUDER_SESSION_MAX_BYTES: '4096' }) });
    const { key } = await server.createKey();

    // Each turn is some 1030 bytes: three fit in 4096, four do not.
    const messages = [1, 2, 3, 4, 5, 6].map((i) => long(`m${i}`, 1000));
    for (const message of messages) {
      expect((await chat(server, key, { message, sessionId: 'long' })).status).toBe(200);
    }
    const last = await chat(server, key, { message: 'und jetzt?', sessionId: 'long' });
    expect(last.headers.get('x-session-truncated')).toBeNull();

    const sent = await lastUserTexts(upstream);
    expect(sent).toEqual([...messages.slice(3), 'und jetzt?']);
    expect(Buffer.byteLength(sent.slice(0, -1).join(''))).toBeLessThanOrEqual(4096);
    expect(await storedMessages(server, key, 'long')).toEqual([...messages.slice(3), 'und jetzt?']);
  });
});

describe('a turn larger than the byte bound alone', () => {
  test('is answered and counted but not stored, with X-Session-Truncated: true (PLAUDER_SESSION_MAX_BYTES=4096, so that a message of the usual length exceeds it; bytes, not characters)', async ({
    upstream,
    serve,
  }) => {
    await upstream.script({ content: 'ok' }, { content: 'groß' }, { content: 'weiter' });
    const server = await serve({ env: openAiEnv(upstream, { PLAUDER_SESSION_MAX_BYTES: '4096' }) });
    const { id, key } = await server.createKey();

    expect((await chat(server, key, { message: 'Hallo', sessionId: 'big' })).status).toBe(200);
    // 2500 characters, 5000 bytes.
    const big = 'ü'.repeat(2500);
    const answered = await chat(server, key, { message: big, sessionId: 'big' });
    expect(answered.status).toBe(200);
    expect(answered.json).toEqual({ reply: 'groß' });
    expect(answered.headers.get('x-session-truncated')).toBe('true');

    const next = await chat(server, key, { message: 'Und?', sessionId: 'big' });
    expect(next.headers.get('x-session-truncated')).toBeNull();
    expect(await lastUserTexts(upstream)).toEqual(['Hallo', 'Und?']);
    expect(await storedMessages(server, key, 'big')).toEqual(['Hallo', 'Und?']);
    const month = server.services.quota.monthOf(Date.now()).month;
    expect(await server.services.usage.used(id, month)).toBe(3);
  });

  test('on /v1/chat/completions with X-Session-Id: an image of 1.2 MB over the default 1 MiB is answered, not stored, and not sent again', async ({
    upstream,
    serve,
  }) => {
    await upstream.script({ content: 'ok' }, { content: 'ein Bild' }, { content: 'weiter' });
    const server = await serve({ env: openAiEnv(upstream) });
    const { key } = await server.createKey();
    const complete = (content: unknown) =>
      http(`${server.url}/v1/chat/completions`, {
        key,
        headers: { 'x-session-id': 'picture' },
        body: { model: 'plauder-de', messages: [{ role: 'user', content }] },
      });

    expect((await complete('Hallo')).headers.get('x-session-truncated')).toBeNull();
    const image = `data:image/png;base64,${'A'.repeat(1_200_000)}`;
    const answered = await complete([
      { type: 'text', text: 'Was ist darauf?' },
      { type: 'image_url', image_url: { url: image } },
    ]);
    expect(answered.status).toBe(200);
    expect(answered.json.choices[0].message.content).toBe('ein Bild');
    expect(answered.headers.get('x-session-truncated')).toBe('true');

    const next = await complete('Und sonst?');
    expect(next.headers.get('x-session-truncated')).toBeNull();
    const last = (await upstream.received()).requests.at(-1);
    expect(last?.rawBody.length).toBeLessThan(10_000);
    expect(await lastUserTexts(upstream)).toEqual(['Hallo', 'Und sonst?']);
    expect(await storedMessages(server, key, 'picture')).toEqual(['Hallo', 'Und sonst?']);
  });
});
