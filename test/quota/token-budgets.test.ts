/**
 * Token budgets (docs/quota-and-limits.md, "Token budgets") on one server, against the real
 * fake upstream: a turn reserves its worst case (input estimate + output cap) and settles to
 * the upstream's reported usage; the plan's default cap is sent upstream; a turn that cannot
 * fit is refused on every door in its own shape, before the core, not counted; a hang-up
 * before delivery releases; the built-in core charges its estimate; a plan change applies
 * from the next request to what the month already used.
 */
import { describe, expect } from 'vitest';
import { viewKey } from '../../src/operations/key-operations.js';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { until } from '../helpers/sse.js';
import { chat, http, type TestServer } from '../helpers/test-server.js';
import { acceptedByType, startWebhookReceiver } from '../helpers/webhook-receiver.js';

/** 100 tokens a month, answers capped at 8 tokens unless the request asks otherwise. */
const PLANS =
  'standard=1000,tok=1000/month+100tokens/month+8tokens/answer,big=1000/month+1000tokens/month+8tokens/answer';

async function tokensUsed(server: TestServer, id: string): Promise<number> {
  const month = server.services.quota.monthOf(Date.now()).month;
  return (await server.services.tokens.forKey(id)).find((row) => row.month === month)?.used ?? 0;
}

/** Waits until the key's reservations are settled (a JSON answer settles once written whole). */
async function settled(server: TestServer, id: string): Promise<void> {
  await until(
    async () => ((await server.services.tokens.open(id)) === 0 ? true : undefined),
    'the settle',
  );
}

async function requestsUsed(server: TestServer, id: string): Promise<number> {
  return server.services.usage.used(id, server.services.quota.monthOf(Date.now()).month);
}

describe('a plan with a token budget', () => {
  test('reserves input + the default cap, sends the cap upstream and settles to the reported usage', async ({
    upstream,
    serve,
  }) => {
    const server = await serve({ env: openAiEnv(upstream, { PLAUDER_PLANS: PLANS }) });
    const { id, key } = await server.createKey({ plan: 'tok' });

    const res = await chat(server, key, { message: 'Hallo' });
    expect(res.status).toBe(200);
    await settled(server, id);
    // The fake upstream reports 1 + 1 tokens for a plain completion.
    expect(await tokensUsed(server, id)).toBe(2);
    const sent = (await upstream.received()).requests.at(-1)?.body as { max_tokens?: number };
    expect(sent.max_tokens).toBe(8);
    // The reply's headers list the token policy beside the requests.
    expect(res.headers.get('ratelimit-policy')).toMatch(/"tokens-monthly";q=100;w=\d+/);
    expect(res.headers.get('ratelimit')).toMatch(/"tokens-monthly";r=\d+;t=\d+/);

    const usage = await http(`${server.url}/api/usage`, { key });
    expect(usage.json.tokens.monthly).toMatchObject({ limit: 100, used: 2, remaining: 98 });
    expect(usage.headers.get('ratelimit')).toContain('"tokens-monthly";r=98;');
  });

  test('settles a streamed answer to the usage the upstream reports when asked for it', async ({
    upstream,
    serve,
  }) => {
    await upstream.script({ stream: { usage: { prompt_tokens: 3, completion_tokens: 4 } } });
    const server = await serve({ env: openAiEnv(upstream, { PLAUDER_PLANS: PLANS }) });
    const { id, key } = await server.createKey({ plan: 'tok' });
    const res = await http(`${server.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', stream: true, messages: [{ role: 'user', content: 'Hallo' }] },
    });
    expect(res.status).toBe(200);
    const sent = (await upstream.received()).requests.at(-1)?.body as {
      stream_options?: { include_usage?: boolean };
    };
    expect(sent.stream_options?.include_usage).toBe(true);
    await until(
      async () => ((await tokensUsed(server, id)) === 7 ? true : undefined),
      'the settle',
    );
    expect(await server.services.tokens.open(id)).toBe(0);
  });

  test('charges what an upstream returned beyond the cap, and logs it', async ({
    upstream,
    serve,
  }) => {
    await upstream.script({ stream: { usage: { prompt_tokens: 10, completion_tokens: 50 } } });
    const server = await serve({ env: openAiEnv(upstream, { PLAUDER_PLANS: PLANS }) });
    const { id, key } = await server.createKey({ plan: 'tok' });
    const res = await http(`${server.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', stream: true, messages: [{ role: 'user', content: 'Hallo' }] },
    });
    expect(res.status).toBe(200);
    await until(
      async () => ((await tokensUsed(server, id)) === 60 ? true : undefined),
      'the settle',
    );
    expect(server.logs.some((line) => line.includes('tokens_over_reservation'))).toBe(true);
  });

  test('refuses a turn that cannot fit on every door in its shape, before the core, not counted', async ({
    upstream,
    serve,
  }) => {
    const server = await serve({ env: openAiEnv(upstream, { PLAUDER_PLANS: PLANS }) });
    const { id, key } = await server.createKey({ plan: 'tok' });
    const messages = [{ role: 'user', content: 'Hallo' }];

    const completions = await http(`${server.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', messages, max_tokens: 500 },
    });
    expect(completions.status).toBe(429);
    expect(completions.json.error).toMatchObject({ code: 'token_budget_exceeded', type: 'tokens' });
    // The month's budget frees up only when the month ends: no retry can help before.
    expect(completions.headers.get('x-should-retry')).toBe('false');
    expect(Number(completions.headers.get('retry-after'))).toBeGreaterThan(60);

    const responses = await http(`${server.url}/v1/responses`, {
      key,
      body: { model: 'plauder-de', input: 'Hallo', max_output_tokens: 500 },
    });
    expect(responses.status).toBe(429);
    expect(responses.json.error).toMatchObject({ code: 'token_budget_exceeded' });
    expect(responses.headers.get('x-should-retry')).toBe('false');

    const messagesDoor = await http(`${server.url}/v1/messages`, {
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: { model: 'plauder-de', max_tokens: 500, messages },
    });
    expect(messagesDoor.status).toBe(429);
    expect(messagesDoor.json).toMatchObject({
      type: 'error',
      error: { type: 'rate_limit_error', details: { error_code: 'token_budget_exceeded' } },
    });
    expect(messagesDoor.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(messagesDoor.headers.get('x-should-retry')).toBe('false');

    // A streamed request is refused before its stream begins, as a plain error.
    const streamed = await http(`${server.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', messages, max_tokens: 500, stream: true },
    });
    expect(streamed.status).toBe(429);
    expect(streamed.json.error.code).toBe('token_budget_exceeded');

    // /api/chat and MCP have no output cap of their own: a budget used up refuses them.
    const big = 'Wort '.repeat(500);
    const api = await chat(server, key, { message: big });
    expect(api.status).toBe(429);
    expect(api.json.error).toMatchObject({ code: 'token_budget_exceeded' });
    expect(api.headers.get('ratelimit-policy')).toContain('"tokens-monthly";q=100');

    const mcp = await http(`${server.url}/mcp`, {
      key,
      headers: { accept: 'application/json, text/event-stream' },
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'chat', arguments: { message: big } },
      },
    });
    expect(mcp.json.result.isError).toBe(true);
    expect(mcp.json.result.content[0].text).toContain('token_budget_exceeded');

    expect((await upstream.received()).requests).toHaveLength(0);
    expect(await requestsUsed(server, id)).toBe(0);
    expect(await tokensUsed(server, id)).toBe(0);
    expect(await server.services.tokens.open(id)).toBe(0);
  });

  test('releases the reservation of a client that hangs up before delivery', async ({
    upstream,
    serve,
  }) => {
    await upstream.script({ hang: true });
    const server = await serve({ env: openAiEnv(upstream, { PLAUDER_PLANS: PLANS }) });
    const { id, key } = await server.createKey({ plan: 'tok' });
    const controller = new AbortController();
    const request = fetch(`${server.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Hallo' }),
      signal: controller.signal,
    });
    await until(
      async () => ((await upstream.received()).requests.length > 0 ? true : undefined),
      'the upstream to receive the request',
    );
    // Reserved while the upstream thinks: input (2) + the cap (8).
    expect(await tokensUsed(server, id)).toBe(10);
    expect(await server.services.tokens.open(id)).toBe(1);
    controller.abort();
    await expect(request).rejects.toThrow();
    await until(
      async () => ((await server.services.tokens.open(id)) === 0 ? true : undefined),
      'the release',
    );
    expect(await tokensUsed(server, id)).toBe(0);
  });

  test('charges the input and the estimate of what was delivered when the client leaves mid-stream', async ({
    upstream,
    serve,
  }) => {
    await upstream.script({ stream: { pieces: ['eins ', 'zwei ', 'drei'], holdAfter: 1 } });
    const server = await serve({ env: openAiEnv(upstream, { PLAUDER_PLANS: PLANS }) });
    const { id, key } = await server.createKey({ plan: 'tok' });
    const controller = new AbortController();
    const response = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'plauder-de',
        stream: true,
        messages: [{ role: 'user', content: 'Hallo' }],
      }),
      signal: controller.signal,
    });
    const reader = response.body?.getReader();
    let seen = '';
    while (!seen.includes('eins')) {
      const chunk = await reader?.read();
      if (chunk === undefined || chunk.done) break;
      seen += new TextDecoder().decode(chunk.value);
    }
    controller.abort();
    // The server cancels the upstream's request once it sees the client gone.
    await until(
      async () => (await upstream.received()).requests.at(-1)?.abortedAt,
      'the upstream request to be aborted',
    );
    await until(
      async () => ((await server.services.tokens.open(id)) === 0 ? true : undefined),
      'the settle',
    );
    // "Hallo" is 2 tokens, the delivered "eins" 1.
    expect(await tokensUsed(server, id)).toBe(3);
  });

  test('on the built-in core charges the estimate of the input and the reply', async ({
    serve,
  }) => {
    const server = await serve({ env: { PLAUDER_CORE: 'builtin', PLAUDER_PLANS: PLANS } });
    const { id, key } = await server.createKey({ plan: 'big' });
    const res = await chat(server, key, { message: 'Hallo' });
    expect(res.status).toBe(200);
    const reply = res.json.reply as string;
    const estimate = 2 + Math.ceil([...reply].length / 4);
    // Settled once the answer was handed to the socket whole.
    await settled(server, id);
    expect(await tokensUsed(server, id)).toBe(estimate);
  });

  test('a plan changed within the month applies its budget from the next request to what was used', async ({
    upstream,
    serve,
  }) => {
    const server = await serve({ env: openAiEnv(upstream, { PLAUDER_PLANS: PLANS }) });
    const { id, key } = await server.createKey({ plan: 'big' });
    const prompt = 'x'.repeat(360);
    // 90 input tokens + 1 reported completion token... the fake reports 1 + 1: script it.
    await upstream.script({
      body: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 0,
        model: 'test-model',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 90, completion_tokens: 1, total_tokens: 91 },
      },
    });
    expect((await chat(server, key, { message: prompt })).status).toBe(200);
    await settled(server, id);
    expect(await tokensUsed(server, id)).toBe(91);

    await server.services.keys.update(id, { plan: 'tok' });
    // 9 of tok's 100 are left: "Hallo" (2) + the cap (8) does not fit.
    const refused = await chat(server, key, { message: 'Hallo' });
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('token_budget_exceeded');
    const usage = await http(`${server.url}/api/usage`, { key });
    expect(usage.json.tokens.monthly).toMatchObject({ limit: 100, used: 91, remaining: 9 });
    // The operator sees the same in the key's view (the admin API and the CLI).
    const view = await viewKey(server.services, id);
    expect(view.ok && view.value.usage.tokens).toEqual({ used: 91, limit: 100, remaining: 9 });

    await server.services.keys.update(id, { plan: 'big' });
    expect((await chat(server, key, { message: 'Hallo' })).status).toBe(200);
  });

  test('sends quota.warning and quota.exhausted with unit tokens once, and counts tokens by plan in /metrics', async ({
    upstream,
    serve,
    onTestFinished,
  }) => {
    const receiver = await startWebhookReceiver();
    onTestFinished(() => receiver.stop());
    const server = await serve({
      env: openAiEnv(upstream, {
        PLAUDER_PLANS: 'standard=1000,ev=1000/month+20tokens/month+4tokens/answer',
        PLAUDER_WEBHOOK_URL: receiver.url,
        PLAUDER_WEBHOOK_SECRET: receiver.secret,
        PLAUDER_WEBHOOK_POLL_INTERVAL: '50ms',
      }),
    });
    const { id, key } = await server.createKey({ plan: 'ev', name: 'Tokens' });
    // Each turn reserves 1 + 4 and settles at the reported 1 + 1: the 7th brings the month
    // from 12 to 17 (80 % is 16; past 16 a turn with the 4-token cap no longer fits).
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) {
      statuses.push((await chat(server, key, { message: 'Hal' })).status);
      await settled(server, id);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 429]);
    await receiver.waitFor(() => receiver.accepted().length >= 2);
    const month = server.services.quota.monthOf(Date.now()).month;
    const data = {
      keyId: id,
      name: 'Tokens',
      plan: 'ev',
      month,
      used: 17,
      limit: 20,
      unit: 'tokens',
    };
    const byType = acceptedByType(receiver);
    expect(byType.get('quota.warning')?.map((d) => d.event.data)).toEqual([data]);
    expect(byType.get('quota.exhausted')?.map((d) => d.event.data)).toEqual([data]);

    const metrics = await http(`${server.url}/metrics`);
    expect(metrics.text).toMatch(/plauder_tokens_total\{plan="ev"\} 16\b/);
    expect(metrics.text).not.toContain(id);
  });

  test('refuses for the minute with a Retry-After until the minute ends, which a retry may wait for', async ({
    upstream,
    serve,
  }) => {
    const server = await serve({
      env: openAiEnv(upstream, {
        PLAUDER_PLANS: 'standard=1000,m=1000/month+12tokens/minute+8tokens/answer',
      }),
    });
    const { id, key } = await server.createKey({ plan: 'm' });
    const messages = [{ role: 'user', content: 'Hallo' }];
    const first = await http(`${server.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', messages },
    });
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toContain('"tokens-minute";q=12;w=60');
    await settled(server, id);
    // "Hallo" (2) + 11 is more than the minute holds, in this minute or the next.
    const refused = await http(`${server.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', messages, max_tokens: 11 },
    });
    expect(refused.status).toBe(429);
    expect(refused.json.error.code).toBe('token_budget_exceeded');
    const wait = Number(refused.headers.get('retry-after'));
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(refused.headers.get('x-should-retry')).toBeNull();
    expect(refused.headers.get('ratelimit')).toMatch(/"tokens-minute";r=\d+;t=\d+/);
    // 2 settled + 2 + 8 fit the minute's 12 (a new minute has them all).
    const fits = await http(`${server.url}/v1/chat/completions`, {
      key,
      body: { model: 'plauder-de', messages, max_tokens: 8 },
    });
    expect(fits.status).toBe(200);
  });
});
