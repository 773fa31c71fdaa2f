/**
 * OpenAI's client and LangChain on their defaults against a server whose only upstream is
 * dead (docs/core.md, "Several upstreams"): they give up, and the circuit breaker bounds how
 * often the dead upstream is tried however often the clients retry. The time each took to
 * give up is printed with the test's output.
 */
import { ChatOpenAI } from '@langchain/openai';
import OpenAI from 'openai';
import { describe, expect } from 'vitest';
import { deadPort } from '../core/openai/upstream-process.js';
import { test } from '../helpers/fixtures.js';
import { http, type TestServer } from '../helpers/test-server.js';

/** A dead upstream; the 2 s cooldown (instead of 30 s) keeps the clients' waits short. */
async function deadEnv(): Promise<Record<string, string>> {
  return {
    PLAUDER_CORE: 'openai',
    PLAUDER_OPENAI_BASE_URL: `http://127.0.0.1:${await deadPort()}/v1`,
    PLAUDER_OPENAI_MODEL: 'test-model',
    PLAUDER_OPENAI_BREAKER_COOLDOWN: '2s',
  };
}

/** Upstream attempts and `/v1` requests so far, from `/metrics`. */
async function counts(server: TestServer): Promise<{ attempts: number; requests: number }> {
  const text = (await http(`${server.url}/metrics`)).text;
  const sum = (prefix: string) =>
    text
      .split('\n')
      .filter((line) => line.startsWith(prefix))
      .reduce((total, line) => total + Number(line.split(' ').at(-1)), 0);
  return {
    attempts: sum('gen_ai_server_request_duration_seconds_count'),
    requests: sum('plauder_http_requests_total{route="/v1/chat/completions"'),
  };
}

describe('clients on their defaults against a dead upstream (a 2 s breaker cooldown keeps the test short)', () => {
  test('the openai client gives up, and the breaker bounds the upstream attempts', async ({
    serve,
  }) => {
    const server = await serve({ env: await deadEnv() });
    const { key } = await server.createKey();
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: key });
    const started = performance.now();
    const asks = Array.from({ length: 3 }, () =>
      client.chat.completions
        .create({ model: 'plauder-de', messages: [{ role: 'user', content: 'Hallo' }] })
        .then(
          () => undefined,
          (error: unknown) => error,
        ),
    );
    const errors = await Promise.all(asks);
    const ms = Math.round(performance.now() - started);
    for (const error of errors) expect(error).toBeInstanceOf(OpenAI.APIError);
    const statuses = errors.map((error) => (error as InstanceType<typeof OpenAI.APIError>).status);
    const { attempts, requests } = await counts(server);
    console.log(
      `openai client: 3 completions gave up after ${ms} ms (statuses ${statuses.join(', ')}; ${requests} requests to plauder, ${attempts} upstream attempts)`,
    );
    // Without the breaker every request would make 3 attempts (the shipped budget).
    expect(attempts).toBeLessThan(requests * 3);
    expect(attempts).toBeLessThanOrEqual(5 + Math.ceil(ms / 2_000) + 1);
  }, 120_000);

  test('LangChain gives up, and the breaker bounds the upstream attempts', async ({ serve }) => {
    const server = await serve({ env: await deadEnv() });
    const { key } = await server.createKey();
    const model = new ChatOpenAI({
      model: 'plauder-en',
      apiKey: key,
      configuration: { baseURL: `${server.url}/v1` },
    });
    const started = performance.now();
    const error = await model.invoke('Hello').then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    const ms = Math.round(performance.now() - started);
    expect(error).toBeInstanceOf(Error);
    const { attempts, requests } = await counts(server);
    console.log(
      `LangChain ChatOpenAI: gave up after ${ms} ms (${requests} requests to plauder, ${attempts} upstream attempts)`,
    );
    expect(attempts).toBeLessThanOrEqual(5 + Math.ceil(ms / 2_000) + 1);
  }, 180_000);
});
