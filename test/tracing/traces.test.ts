/**
 * Traces (docs/observability.md): the real server with `OTEL_EXPORTER_OTLP_ENDPOINT` pointing
 * at a real OTLP/HTTP receiver in the test, in front of the real fake upstream process.
 */
import { describe, expect } from 'vitest';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { postStream } from '../helpers/sse.js';
import { chat, http } from '../helpers/test-server.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
const SECRET_TEXT = 'Mein geheimes Passwort ist Zebra-4711';
const SESSION = 'sitzung-sehr-privat';

describe('traces', () => {
  test('a server span per request and a GenAI client span per upstream attempt, in the caller’s trace, without message text, key or session', async ({
    serve,
    upstream,
  }) => {
    const receiver = await startOtlpReceiver();
    try {
      const server = await serve({
        env: openAiEnv(upstream, {
          OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
          PLAUDER_OPENAI_API_KEY: 'sk-upstream-secret-42',
        }),
      });
      const { key, id } = await server.createKey();
      await upstream.script({
        body: {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          model: 'test-model-2026',
          choices: [
            { index: 0, message: { role: 'assistant', content: 'Antwort' }, finish_reason: 'stop' },
          ],
          usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
        },
      });
      const res = await http(`${server.url}/api/chat`, {
        key,
        headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` },
        body: { message: SECRET_TEXT, sessionId: SESSION },
      });
      expect(res.json).toEqual({ reply: 'Antwort' });
      await upstream.script({ stream: { pieces: ['Ge', 'streamt'] } });
      await postStream(`${server.url}/api/chat-en`, { key, body: { message: SECRET_TEXT } });
      const [sent] = (await upstream.received()).requests;
      // Closing the server flushes the spans still buffered.
      await server.close();

      const plainServer = receiver.spans.find(
        (span) => span.kind === 2 && span.traceId === TRACE_ID,
      );
      expect(plainServer).toMatchObject({
        name: 'POST /api/chat',
        parentSpanId: CLIENT_SPAN,
        attributes: {
          'http.request.method': 'POST',
          'http.route': '/api/chat',
          'http.response.status_code': 200,
        },
      });
      const attempt = receiver.spans.find(
        (span) => span.kind === 3 && span.parentSpanId === plainServer?.spanId,
      );
      expect(attempt).toMatchObject({
        traceId: TRACE_ID,
        name: 'chat test-model',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'test-model',
          'gen_ai.response.model': 'test-model-2026',
          'gen_ai.usage.input_tokens': 11,
          'gen_ai.usage.output_tokens': 7,
          'server.address': '127.0.0.1',
          'server.port': upstream.port,
          'http.response.status_code': 200,
        },
      });
      expect(attempt?.attributes['error.type']).toBeUndefined();
      // The upstream was asked in the same trace, as a child of the attempt's span.
      expect(sent?.headers.traceparent).toBe(`00-${TRACE_ID}-${attempt?.spanId}-01`);

      const streamed = receiver.spans.find(
        (span) => span.kind === 3 && span.attributes['plauder.upstream.streamed'] === true,
      );
      expect(streamed?.traceId).not.toBe(TRACE_ID);
      expect(streamed?.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      expect(streamed?.attributes['gen_ai.response.model']).toEqual(expect.any(String));

      const exported = receiver.bodies.join('\n');
      for (const secret of [SECRET_TEXT, 'Zebra', SESSION, key, id, 'sk-upstream-secret-42']) {
        expect(exported).not.toContain(secret);
      }
    } finally {
      await receiver.close();
    }
  });

  test('a failed attempt carries error.type, and the next upstream’s attempt is its sibling', async ({
    serve,
    upstream,
  }) => {
    const receiver = await startOtlpReceiver();
    try {
      const server = await serve({
        env: openAiEnv(
          upstream,
          { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
          { retries: 'shipped' },
        ),
      });
      const { key } = await server.createKey();
      await upstream.script({ status: 503, body: {} });
      expect((await chat(server, key, { message: 'Hallo' })).status).toBe(200);
      await server.close();
      const attempts = receiver.spans.filter((span) => span.kind === 3);
      expect(attempts.map((span) => span.attributes['error.type'])).toEqual(['503', undefined]);
      expect(new Set(attempts.map((span) => span.parentSpanId)).size).toBe(1);
    } finally {
      await receiver.close();
    }
  });

  test('without OTEL_EXPORTER_OTLP_ENDPOINT nothing is traced and no traceparent goes upstream', async ({
    serve,
    upstream,
  }) => {
    const server = await serve({ env: openAiEnv(upstream) });
    const { key } = await server.createKey();
    await http(`${server.url}/api/chat`, {
      key,
      headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` },
      body: { message: 'Hallo' },
    });
    const [sent] = (await upstream.received()).requests;
    expect(sent?.headers.traceparent).toBeUndefined();
  });
});
