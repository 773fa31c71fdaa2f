import net from 'node:net';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect } from 'vitest';
import type { CoreAdapter, CoreChunk, CoreRequest } from '../../src/core/core-adapter.js';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { until } from '../helpers/sse.js';
import { chat } from '../helpers/test-server.js';

// A client that never reads a large streamed reply: plauder stops taking pieces from the core
// (and so stops reading an upstream) once the client's socket is full, cuts the client off
// after the stall timeout, and serves other keys meanwhile. The kernel's socket buffers on
// loopback take a few MB before the client's socket counts as full: the replies are larger.

// A full collection on demand, to see that a cut-off turn leaves nothing reachable.
v8.setFlagsFromString('--expose-gc');
const collectGarbage = vm.runInNewContext('gc') as () => void;

/**
 * A raw socket that sends one request and reads nothing until `readToEnd` (a paused socket
 * does not even notice that the server closed it): then the bytes it still gets.
 */
function nonReadingClient(url: string, key: string, path: string, body: unknown) {
  const text = JSON.stringify(body);
  const socket = net.connect(Number(new URL(url).port), '127.0.0.1');
  socket.pause();
  let closedFlag = false;
  let bytes = 0;
  const closed = new Promise<void>((resolve) => {
    socket.once('close', () => {
      closedFlag = true;
      resolve();
    });
  });
  socket.on('error', () => {});
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n` +
      `Content-Type: application/json\r\nAccept: text/event-stream\r\n` +
      `Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
  );
  return {
    get isClosed() {
      return closedFlag;
    },
    /** Reads until the server closes the connection, or until the answer's last chunk. */
    async readToEnd(): Promise<number> {
      let tail = '';
      socket.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        tail = (tail + chunk.toString('latin1')).slice(-16);
        if (tail.endsWith('\r\n0\r\n\r\n')) socket.destroy();
      });
      socket.resume();
      await closed;
      return bytes;
    },
  };
}

/** A core with a 64 MB reply in 8 KiB pieces, made only as they are taken. */
function createLargeCore() {
  const pieceChars = 8192;
  const pieces = 8192;
  const state = { taken: 0, ended: false, request: undefined as CoreRequest | undefined };
  const core: CoreAdapter & { readonly state: typeof state; readonly totalChars: number } = {
    name: 'large',
    state,
    totalChars: pieceChars * pieces,
    reply: () => Promise.resolve('not streamed'),
    async *stream(request): AsyncIterable<CoreChunk> {
      state.request = request;
      const piece = 'abcdefgh'.repeat(pieceChars / 8);
      try {
        for (let i = 0; i < pieces && !request.signal.aborted; i++) {
          state.taken += pieceChars;
          yield { type: 'delta', text: piece };
        }
      } finally {
        state.ended = true;
      }
    },
  };
  return core;
}

// The two tests have servers of their own: their stall timeouts run out side by side.
describe.concurrent('a client that never reads a large streamed reply', () => {
  test('/api/chat: the core is asked for no more than the socket takes, and the client is cut off after the stall timeout', async ({
    serve,
  }) => {
    const core = createLargeCore();
    const server = await serve({ core, env: { PLAUDER_STREAM_STALL_TIMEOUT: '2s' } });
    const { key } = await server.createKey();
    const { key: otherKey } = await server.createKey({ name: 'other' });
    const client = nonReadingClient(server.url, key, '/api/chat', {
      message: 'Erzähl viel',
      stream: true,
    });
    await until(() => core.state.request, 'the core is asked');

    // Another key's turn is answered while the stream waits for its client.
    const other = await chat(server, otherKey, { message: 'Hallo' });
    expect(other.json).toEqual({ reply: 'not streamed' });
    expect(client.isClosed).toBe(false);

    // The client read nothing: the stall timeout cuts it off and the turn ends.
    await until(() => (core.state.request?.signal.aborted ? true : undefined), 'cut off', 30_000);
    expect(core.state.taken).toBeLessThan(core.totalChars / 4);
    expect(await client.readToEnd()).toBeLessThan(core.totalChars / 4);
    await until(() => (core.state.ended ? true : undefined), 'the core stream is closed');

    // Nothing of the turn stays reachable once its client is gone.
    const call = new WeakRef(core.state.request as object);
    core.state.request = undefined;
    await until(() => {
      collectGarbage();
      return call.deref() === undefined ? true : undefined;
    }, 'the cut-off turn is collected');
  }, 60_000);

  describe('with the openai core', () => {
    test('/v1: the upstream is read no faster than the client, the client is cut off after the stall timeout, other keys are served', async ({
      serve,
      upstream,
    }) => {
      const server = await serve({
        env: openAiEnv(
          upstream,
          {
            PLAUDER_STREAM_STALL_TIMEOUT: '3s',
            // Shorter than the stall: an upstream paused for a slow client is not a silent one.
            PLAUDER_OPENAI_TOKEN_GAP_TIMEOUT: '1s',
          },
          // A paused upstream must not be taken for a failed one and asked again.
          { retries: 'shipped' },
        ),
      });
      const { key } = await server.createKey();
      const { key: otherKey } = await server.createKey({ name: 'other' });
      // 32 MB of text in 2000-letter pieces: more than the loopback's socket buffers hold.
      const pieces = 16_000;
      const pieceChars = 2000;
      await upstream.script({ stream: { large: { pieces, pieceChars } } });
      const client = nonReadingClient(server.url, key, '/v1/chat/completions', {
        model: 'plauder-de',
        stream: true,
        messages: [{ role: 'user', content: 'Erzähl viel' }],
      });

      interface StreamRecord {
        streamedBytes?: number;
        waitingForDrain?: boolean;
        streamEnded?: boolean;
        abortedAt?: number;
      }
      const record = async () =>
        ((await upstream.received()).requests[0] as StreamRecord | undefined) ?? undefined;

      // The upstream cannot write more: plauder has stopped reading it.
      const blocked = await until(async () => {
        const seen = await record();
        return seen?.waitingForDrain ? seen : undefined;
      }, 'the upstream waits for drain');
      expect(blocked.streamEnded).toBe(false);
      expect(blocked.streamedBytes).toBeLessThan((pieces * pieceChars) / 2);

      const other = await chat(server, otherKey, { message: 'Hallo' });
      expect(other.json).toEqual({ reply: 'reply to: Hallo' });
      expect(client.isClosed).toBe(false);

      // The client is cut off; the turn's upstream request is aborted before its end.
      const ended = await until(
        async () => {
          const seen = await record();
          return seen?.abortedAt ? seen : undefined;
        },
        'the upstream request is aborted',
        30_000,
      );
      expect(ended.streamEnded).toBe(false);
      expect(await client.readToEnd()).toBeLessThan((pieces * pieceChars) / 2);
      expect(server.logs.join('\n')).not.toMatch(/core_timeout/);
    }, 60_000);
  });
});
