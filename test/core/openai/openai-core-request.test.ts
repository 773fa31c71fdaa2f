import { describe, expect, it } from 'vitest';
import type { CoreRequest, Turn } from '../../../src/core/core-adapter.js';
import { chatCompletionsUrl } from '../../../src/core/openai/create-openai-core.js';
import { test } from './openai-test.js';
import type { Upstream } from './upstream-process.js';

function ask(message: string, language: 'de' | 'en' = 'de', history: Turn[] = []): CoreRequest {
  return { message, language, history, signal: new AbortController().signal };
}

async function onlyRequest(upstream: Upstream) {
  const { requests } = await upstream.received();
  expect(requests).toHaveLength(1);
  const [request] = requests;
  if (request === undefined) throw new Error('no request received');
  return request;
}

describe('openai core: the request it sends', () => {
  test('posts model, German system prompt, history pairs in order and the new message', async ({
    upstream,
    openCore,
  }) => {
    const history: Turn[] = [
      { message: 'Ich heiße Ada.', reply: 'Hallo Ada!', language: 'de' },
      { message: 'What is a plan?', reply: 'A plan sets your limit.', language: 'en' },
    ];
    const reply = await openCore().reply(ask('Wie heiße ich?', 'de', history));

    expect(reply).toBe('reply to: Wie heiße ich?');
    const request = await onlyRequest(upstream);
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/v1/chat/completions');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.body).toEqual({
      model: 'test-model',
      messages: [
        { role: 'system', content: 'Antworte auf Deutsch.' },
        { role: 'user', content: 'Ich heiße Ada.' },
        { role: 'assistant', content: 'Hallo Ada!' },
        { role: 'user', content: 'What is a plan?' },
        { role: 'assistant', content: 'A plan sets your limit.' },
        { role: 'user', content: 'Wie heiße ich?' },
      ],
      stream: false,
    });
  });

  test('uses the English system prompt for an English request', async ({ upstream, openCore }) => {
    await openCore().reply(ask('Hello', 'en'));
    const request = await onlyRequest(upstream);
    expect(request.body).toMatchObject({
      messages: [
        { role: 'system', content: 'Answer in English.' },
        { role: 'user', content: 'Hello' },
      ],
    });
  });

  test('leaves temperature and max_tokens out when unset', async ({ upstream, openCore }) => {
    await openCore().reply(ask('Hallo'));
    const body = (await onlyRequest(upstream)).body as Record<string, unknown>;
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('max_tokens');
  });

  test('sends temperature and max_tokens when configured, including temperature 0', async ({
    upstream,
    openCore,
  }) => {
    await openCore({ temperature: 0, maxTokens: 256 }).reply(ask('Hallo'));
    expect((await onlyRequest(upstream)).body).toMatchObject({ temperature: 0, max_tokens: 256 });
  });

  test('sends the API key as a bearer token', async ({ upstream, openCore }) => {
    await openCore().reply(ask('Hallo'));
    expect((await onlyRequest(upstream)).headers.authorization).toBe(
      'Bearer sk-test-secret-1234567890',
    );
  });

  test('sends no Authorization header without an API key', async ({ upstream, openCore }) => {
    await openCore({ apiKey: undefined }).reply(ask('Hallo'));
    expect((await onlyRequest(upstream)).headers).not.toHaveProperty('authorization');
  });
});

describe('openai core: the reply it returns', () => {
  test('returns choices[0].message.content trimmed', async ({ upstream, openCore }) => {
    await upstream.script({ content: '  \n Guten Tag!  \n' });
    await expect(openCore().reply(ask('Hallo'))).resolves.toBe('Guten Tag!');
  });

  test('is named openai', ({ openCore }) => {
    expect(openCore().name).toBe('openai');
  });

  const unusable = [
    ['non-JSON (an HTML error page with 200)', { raw: '<html><body>Bad Gateway</body></html>' }],
    ['malformed JSON', { raw: '{"choices": [', contentType: 'application/json' }],
    ['a JSON array', { body: [] }],
    ['no choices', { body: { id: 'x', object: 'chat.completion' } }],
    ['an empty choices array', { body: { choices: [] } }],
    ['a choice without message', { body: { choices: [{ index: 0 }] } }],
    ['null content', { body: { choices: [{ message: { role: 'assistant', content: null } }] } }],
    ['numeric content', { body: { choices: [{ message: { content: 42 } }] } }],
    ['empty content', { content: '' }],
    ['whitespace-only content', { content: ' \n\t ' }],
  ] as const;

  test.for(unusable)(
    'fails with core_unavailable, not retried, on %s',
    async ([_label, step], { upstream, openCore }) => {
      await upstream.script(step, { content: 'should not be reached' });
      await expect(openCore().reply(ask('Hallo'))).rejects.toMatchObject({
        name: 'CoreError',
        code: 'core_unavailable',
      });
      expect((await upstream.received()).requests).toHaveLength(1);
    },
  );
});

describe('chatCompletionsUrl', () => {
  it.each([
    ['http://127.0.0.1:11434/v1', 'http://127.0.0.1:11434/v1/chat/completions'],
    ['http://127.0.0.1:11434/v1/', 'http://127.0.0.1:11434/v1/chat/completions'],
    ['https://api.example.com', 'https://api.example.com/chat/completions'],
    ['http://h/v1/chat/completions', 'http://h/v1/chat/completions'],
    ['https://h/openai/v1?api-version=1', 'https://h/openai/v1/chat/completions?api-version=1'],
  ])('appends /chat/completions to %s', (base, expected) => {
    expect(chatCompletionsUrl(base).href).toBe(expected);
  });
});
