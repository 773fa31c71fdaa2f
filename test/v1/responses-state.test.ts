/**
 * Kept responses of `/v1/responses` (docs/contract.md, "Responses API"), on both dialects:
 * a response is a turn of a server-side conversation of its key; `previous_response_id`
 * continues it (at once after the answer, and after a restart on the same database);
 * `GET` and `DELETE /v1/responses/{id}`; `store: false` keeps nothing; another key's id,
 * an unknown or a deleted one is 404 before anything is counted; nothing is kept in clear.
 * And the hang-up and retry rules of every door: leaving mid-stream counts once and keeps
 * nothing partial, leaving before the first event costs nothing, an idempotent retry
 * replays. The official `openai` client on its defaults, the `openai` core in front of the
 * real upstream process.
 */
import OpenAI from 'openai';
import { describe, expect } from 'vitest';
import type { Upstream } from '../core/openai/upstream-process.js';
import { test as base, openAiEnv } from '../helpers/fixtures.js';
import { postStream, until } from '../helpers/sse.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { http, type TestServer } from '../helpers/test-server.js';

const env = (up: Upstream) =>
  openAiEnv(up, { PLAUDER_PLANS: 'standard=1000,one=1' }, { retries: 'shipped' });

const test = base.extend('gateway', async ({ serve, upstream }) => async () => {
  const s = await serve({ env: env(upstream) });
  const { id, key } = await s.createKey();
  return { up: upstream, s, id, key, client: openai(s, key) };
});

const openai = (s: TestServer, key: string) => new OpenAI({ baseURL: `${s.url}/v1`, apiKey: key });

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

/** The message texts of the upstream's last request. */
async function lastMessages(up: Upstream): Promise<unknown[]> {
  const body = (await up.received()).requests.at(-1)?.body as
    | { messages?: { content: unknown }[] }
    | undefined;
  return (body?.messages ?? []).map((m) => m.content);
}

async function caught(promise: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an APIError: ${error}`);
  return error;
}

describe('previous_response_id', () => {
  test('continues the conversation: a follow-up sent as soon as the answer came sees it', async ({
    gateway,
  }) => {
    const { up, client } = await gateway();
    let previous: string | undefined;
    for (const text of ['My name is Ann', 'I live in Graz', 'Who am I?']) {
      const response = await client.responses.create({
        model: 'plauder-en',
        input: text,
        ...(previous ? { previous_response_id: previous } : {}),
      });
      previous = response.id;
    }
    expect(await lastMessages(up)).toEqual(
      expect.arrayContaining([
        'My name is Ann',
        'reply to: My name is Ann',
        'I live in Graz',
        'reply to: I live in Graz',
        'Who am I?',
      ]),
    );
  });

  test('survives a restart of the server on the same database', async ({ serve, upstream }) => {
    const database = await createTestDatabase();
    try {
      const first = await serve({ env: env(upstream), database });
      const { key } = await first.createKey();
      const response = await openai(first, key).responses.create({
        model: 'plauder-en',
        input: 'Remember the number 42',
      });
      await first.close();
      const second = await serve({ env: env(upstream), database });
      await openai(second, key).responses.create({
        model: 'plauder-en',
        input: 'Which number?',
        previous_response_id: response.id,
      });
      expect(await lastMessages(upstream)).toEqual(
        expect.arrayContaining(['Remember the number 42', 'reply to: Remember the number 42']),
      );
      expect((await openai(second, key).responses.retrieve(response.id)).output_text).toBe(
        'reply to: Remember the number 42',
      );
      await second.close();
    } finally {
      await database.drop();
    }
  });

  test("is 404 for an unknown, a deleted or another key's id, before anything is counted", async ({
    gateway,
  }) => {
    const { s, id, client } = await gateway();
    const other = await s.createKey();
    const mine = await client.responses.create({ model: 'plauder-en', input: 'Hello' });
    const theirs = await openai(s, other.key).responses.create({
      model: 'plauder-en',
      input: 'Secret',
    });
    await client.responses.delete(mine.id);
    for (const previous of [theirs.id, mine.id, 'resp_0123456789abcdef0123456789abcdef']) {
      const error = await caught(
        client.responses.create({
          model: 'plauder-en',
          input: 'Go on',
          previous_response_id: previous,
        }),
      );
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error.param).toBe('previous_response_id');
      expect(error.code).toBe('previous_response_not_found');
    }
    expect(await used(s, id)).toBe(1);
  });

  test('with store: false reads the conversation and adds nothing to it', async ({ gateway }) => {
    const { up, client } = await gateway();
    const first = await client.responses.create({ model: 'plauder-en', input: 'My name is Ann' });
    const aside = await client.responses.create({
      model: 'plauder-en',
      input: 'An aside',
      previous_response_id: first.id,
      store: false,
    });
    expect(await lastMessages(up)).toContain('My name is Ann');
    expect(await caught(client.responses.retrieve(aside.id))).toBeInstanceOf(OpenAI.NotFoundError);
    await client.responses.create({
      model: 'plauder-en',
      input: 'Who am I?',
      previous_response_id: first.id,
    });
    const seen = await lastMessages(up);
    expect(seen).toContain('My name is Ann');
    expect(seen).not.toContain('An aside');
  });
});

describe('GET and DELETE /v1/responses/{id}', () => {
  test('retrieve returns the kept response as it was answered, streamed ones too', async ({
    gateway,
  }) => {
    const { s, id, client } = await gateway();
    const plain = await client.responses.create({ model: 'plauder-en', input: 'Hello' });
    const streamed = await client.responses
      .stream({ model: 'plauder-en', input: 'Tell me more' })
      .finalResponse();
    for (const response of [plain, streamed]) {
      const kept = await client.responses.retrieve(response.id);
      expect(kept.id).toBe(response.id);
      // The stream's helper adds `parsed` to each text part; the rest is as answered.
      expect(response.output).toMatchObject(kept.output);
      expect(kept.usage).toEqual(response.usage);
      expect(kept.output_text).toBe(response.output_text);
    }
    // Reading kept responses is not counted.
    expect(await used(s, id)).toBe(2);
  });

  test("another key's id, an unknown id and a deleted one are 404", async ({ gateway }) => {
    const { s, client } = await gateway();
    const other = await s.createKey();
    const response = await client.responses.create({ model: 'plauder-en', input: 'Private' });
    const stranger = openai(s, other.key);
    expect(await caught(stranger.responses.retrieve(response.id))).toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    expect(await caught(stranger.responses.delete(response.id))).toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    const unauthenticated = await http(`${s.url}/v1/responses/${response.id}`, {
      method: 'DELETE',
    });
    expect(unauthenticated.status).toBe(401);
    await client.responses.delete(response.id);
    expect(await caught(client.responses.retrieve(response.id))).toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    expect(await caught(client.responses.delete(response.id))).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test('store: false keeps nothing: no response, no conversation', async ({ gateway }) => {
    const { s, client } = await gateway();
    const response = await client.responses.create({
      model: 'plauder-en',
      input: 'Forget this',
      store: false,
    });
    expect(response).toMatchObject({ store: false });
    expect(await caught(client.responses.retrieve(response.id))).toBeInstanceOf(
      OpenAI.NotFoundError,
    );
    const rows = await s.services.store.db.selectFrom('sessions').select('session_hash').execute();
    expect(rows).toEqual([]);
  });

  test('keeps responses sealed: no reply text in the database', async ({ gateway }) => {
    const { s, client } = await gateway();
    const canary = 'canary-7f3a9d-responses';
    await client.responses.create({ model: 'plauder-en', input: canary });
    const contents = await s.database.contents();
    expect(contents.includes(Buffer.from(canary))).toBe(false);
  });

  test('X-Session-Id keeps the turn in the named session, as on /v1/chat/completions', async ({
    gateway,
  }) => {
    const { s, key } = await gateway();
    const client = new OpenAI({
      baseURL: `${s.url}/v1`,
      apiKey: key,
      defaultHeaders: { 'X-Session-Id': 'shared-1' },
    });
    await client.responses.create({ model: 'plauder-en', input: 'Hello from responses' });
    const session = await http(`${s.url}/api/sessions/shared-1`, { key });
    expect(session.status).toBe(200);
    expect(JSON.stringify(session.json)).toContain('Hello from responses');
  });
});

describe('hang-ups and retries', () => {
  test('leaving mid-stream counts once and keeps nothing partial', async ({ gateway }) => {
    const { up, s, id, key } = await gateway();
    await up.script({ stream: { pieces: ['Es ', 'war ', 'einmal'], holdAfter: 2 } });
    const controller = new AbortController();
    let deltas = 0;
    let responseId: string | undefined;
    const answering = postStream(`${s.url}/v1/responses`, {
      key,
      body: { model: 'plauder-de', input: 'Märchen', stream: true },
      signal: controller.signal,
      onEvent: (event) => {
        if (event.event === 'response.created') responseId = JSON.parse(event.data).response.id;
        if (event.event === 'response.output_text.delta' && ++deltas === 2) controller.abort();
      },
    });
    await expect(answering).rejects.toThrow();
    await until(async () => (await up.received()).requests.at(-1)?.abortedAt, 'the upstream abort');
    await until(async () => ((await used(s, id)) === 1 ? true : undefined), 'counted once');
    const kept = await http(`${s.url}/v1/responses/${responseId}`, { key });
    expect(kept.status).toBe(404);
    const rows = await s.services.store.db.selectFrom('sessions').select('turn_count').execute();
    expect(rows).toEqual([]);
  });

  test('leaving before the first event costs nothing', async ({ gateway }) => {
    const { up, s, id, key } = await gateway();
    await up.script({ stream: { pieces: ['Es ', 'war'], holdAfter: 0 } });
    const controller = new AbortController();
    const answering = postStream(`${s.url}/v1/responses`, {
      key,
      body: { model: 'plauder-de', input: 'Märchen', stream: true },
      signal: controller.signal,
    }).catch(() => undefined);
    await until(
      async () => ((await up.received()).requests.length > 0 ? true : undefined),
      'asked',
    );
    controller.abort();
    await answering;
    await until(async () => (await up.received()).requests.at(-1)?.abortedAt, 'the abort');
    await until(async () => ((await used(s, id)) === 0 ? true : undefined), 'refunded');
    const rows = await s.services.store.db.selectFrom('responses').select('id_hash').execute();
    expect(rows).toEqual([]);
  });

  test('an idempotent retry replays the response, plain and streamed, counted once', async ({
    gateway,
  }) => {
    const { up, s, id, key } = await gateway();
    const body = { model: 'plauder-en', input: 'Once only' };
    const headers = { 'idempotency-key': 'responses-once' };
    const first = await http(`${s.url}/v1/responses`, { key, headers, body });
    const again = await http(`${s.url}/v1/responses`, { key, headers, body });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.json).toEqual(first.json);
    const streamBody = { ...body, stream: true };
    const streamHeaders = { 'idempotency-key': 'responses-stream' };
    const streamed = await postStream(`${s.url}/v1/responses`, {
      key,
      headers: streamHeaders,
      body: streamBody,
    });
    const replayed = await postStream(`${s.url}/v1/responses`, {
      key,
      headers: streamHeaders,
      body: streamBody,
    });
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    const completed = (answer: typeof streamed) =>
      JSON.parse(answer.events.find((e) => e.event === 'response.completed')?.data ?? '{}')
        .response;
    expect(completed(replayed)).toEqual(completed(streamed));
    // The same key with the chat completions door is another request (another endpoint).
    const elsewhere = await http(`${s.url}/v1/chat/completions`, {
      key,
      headers,
      body: { model: 'plauder-en', messages: [{ role: 'user', content: 'Once only' }] },
    });
    expect(elsewhere.status).toBe(422);
    expect((await up.received()).requests).toHaveLength(2);
    expect(await used(s, id)).toBe(2);
  });
});
