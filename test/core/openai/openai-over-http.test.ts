import { describe, expect } from 'vitest';
import { test as base, openAiEnv } from '../../helpers/fixtures.js';
import { chat, startTestServer } from '../../helpers/test-server.js';
import type { Upstream } from './upstream-process.js';

// The whole path: the real server with PLAUDER_CORE=openai in front of a real upstream process.
// One server for the file, in front of the worker's upstream; each test asks for `upstream`,
// which resets it before the test.
const test = base.extend(
  'served',
  { scope: 'file' },
  async ({ upstreamProcess }, { onCleanup }) => {
    const server = await startTestServer({
      env: openAiEnv(upstreamProcess, {
        PLAUDER_OPENAI_API_KEY: 'sk-upstream-secret',
        PLAUDER_OPENAI_TIMEOUT: '300ms',
        PLAUDER_OPENAI_MAX_RETRIES: '1',
        PLAUDER_OPENAI_RETRY_BASE_DELAY: '10ms',
      }),
    });
    onCleanup(() => server.close());
    const { key, id: keyId } = await server.createKey();
    const used = () =>
      server.services.usage.used(keyId, server.services.quota.monthOf(Date.now()).month);
    return { server, key, used };
  },
);

describe('the OpenAI adapter behind the API', () => {
  test('sends the system prompt of the endpoint language, the session history in order and the model', async ({
    served: { server, key },
    upstream,
  }) => {
    await chat(server, key, { message: 'Ich heiße Anna', sessionId: 'oa' });
    await chat(server, key, { message: 'What is my name?', sessionId: 'oa' }, '/api/chat-en');
    const { requests } = await upstream.received();
    const last = requests.at(-1)?.body as {
      model: string;
      messages: Array<{ role: string; content: string }>;
    };
    expect(last.model).toBe('test-model');
    expect(last.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(last.messages[0]?.content).toMatch(/English/);
    expect(last.messages.slice(1).map((m) => m.content)).toEqual([
      'Ich heiße Anna',
      'reply to: Ich heiße Anna',
      'What is my name?',
    ]);
    expect(requests.at(-1)?.headers.authorization).toBe('Bearer sk-upstream-secret');
  });

  test('answers 200 with the upstream reply and counts it once', async ({
    served: { server, key, used },
    upstream,
  }) => {
    const before = await used();
    await upstream.script({ content: 'Hallo vom Modell' });
    const res = await chat(server, key, { message: 'Hallo' });
    expect(res.json).toEqual({ reply: 'Hallo vom Modell' });
    expect(await used()).toBe(before + 1);
  });

  const failures: Array<[string, (upstream: Upstream) => Promise<void>, string]> = [
    [
      'answers 500 twice',
      (upstream) => upstream.script({ status: 500 }, { status: 500 }),
      'core_unavailable',
    ],
    [
      'answers garbage',
      (upstream) => upstream.script({ raw: '<html>oops</html>' }),
      'core_unavailable',
    ],
    [
      'answers 429 twice',
      (upstream) => upstream.script({ status: 429 }, { status: 429 }),
      'core_unavailable',
    ],
    [
      'hangs past the timeout',
      // One attempt: a timed-out upstream is not asked the same again (docs/core.md).
      (upstream) => upstream.script({ hang: true }),
      'core_timeout',
    ],
  ];
  test.for(failures)(
    'answers 500 when the upstream %s, counts nothing and leaks nothing',
    async ([, arrange, code], { served: { server, key, used }, upstream }) => {
      const before = await used();
      await arrange(upstream);
      const res = await chat(server, key, { message: 'Hallo' });
      expect(res.status).toBe(500);
      expect(res.json.error.code).toBe(code);
      expect(res.text).not.toMatch(/oops|sk-upstream|html/);
      expect(await used()).toBe(before);
      // The service stays up and recovers with the next good answer.
      const next = await chat(server, key, { message: 'Noch da?' });
      expect(next.json).toEqual({ reply: 'reply to: Noch da?' });
      expect(server.logs.join('\n')).not.toContain('sk-upstream-secret');
    },
  );

  test('retries a 503 and answers with the second attempt, counted once', async ({
    served: { server, key, used },
    upstream,
  }) => {
    const before = await used();
    await upstream.script({ status: 503 }, { content: 'zweiter Versuch' });
    const res = await chat(server, key, { message: 'Hallo' });
    expect(res.json).toEqual({ reply: 'zweiter Versuch' });
    expect((await upstream.received()).requests).toHaveLength(2);
    expect(await used()).toBe(before + 1);
  });
});
