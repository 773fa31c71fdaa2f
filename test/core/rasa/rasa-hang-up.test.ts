/**
 * A client that hangs up while the Rasa bot is thinking (docs/contract.md, "The client goes away": the
 * request to Rasa is aborted when the client leaves): the real server in front of a real bot
 * process; the bot sees its request closed within a second, nothing is counted or stored.
 */
import { describe, expect } from 'vitest';
import { rasaEnv, test } from '../../helpers/fixtures.js';
import { until } from '../../helpers/sse.js';

describe('a client that hangs up in front of a Rasa bot', () => {
  test('aborts the request to the bot within a second, refunds and stores nothing', async ({
    rasaBot: bot,
    serve,
  }) => {
    await bot.script({ hang: true });
    const server = await serve({ env: rasaEnv(bot, { PLAUDER_RASA_TIMEOUT: '30s' }) });
    const { id, key } = await server.createKey();
    const controller = new AbortController();
    const request = fetch(`${server.url}/api/chat-en`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'Where is my order?', sessionId: 'order-7' }),
      signal: controller.signal,
    });
    await until(
      async () => ((await bot.requests()).length === 1 ? true : undefined),
      'the bot to receive the request',
    );
    const hungUpAt = Date.now();
    controller.abort();
    await expect(request).rejects.toThrow();
    await until(
      async () => ((await bot.requests())[0]?.closedEarly ? true : undefined),
      'the bot to see its request closed',
    );
    const seenAfter = Date.now() - hungUpAt;
    console.log(`[rasa hang-up] the bot saw its request closed within ${seenAfter} ms`);
    expect(seenAfter).toBeLessThan(1000);

    const month = server.services.quota.monthOf(Date.now()).month;
    await until(
      async () => ((await server.services.usage.used(id, month)) === 0 ? true : undefined),
      'the refund',
    );
    expect(await server.services.sessions.read(id, 'order-7', Date.now())).toBeUndefined();
    const line = await until(
      async () => server.logs.find((l) => l.includes('"outcome":"client_closed"')),
      'the client_closed log line',
    );
    expect(JSON.parse(line)).toMatchObject({ route: '/api/chat-en', status: 499, keyId: id });
  });
});
