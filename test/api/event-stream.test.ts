/**
 * How a Server-Sent Events answer leaves the process (src/routes/event-stream.ts), on a real
 * Fastify server on loopback read by a real client: the first event of the reply is written
 * to the socket at once, with the status, the headers and the opening held for it; events
 * after it in the same turn of the event loop wait, corked, for the turn's end and leave
 * together; the client reads them all, in order.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { openEventStream } from '../../src/routes/event-stream.js';
import { until } from '../helpers/sse.js';

/** What the socket held back (corked, not yet handed to the kernel) at one moment. */
interface Held {
  readonly corked: number;
  readonly bytes: number;
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/**
 * Serves one stream from `write`, which gets the stream and a probe of its socket, and
 * returns the probes `write` recorded with the text the client read.
 */
async function serve(
  write: (
    stream: ReturnType<typeof openEventStream>,
    held: () => Held,
  ) => Promise<Record<string, Held>>,
): Promise<{ held: Record<string, Held>; text: string; contentType: string | null }> {
  let recorded: Record<string, Held> = {};
  app = Fastify();
  app.get('/stream', async (_request, reply) => {
    const stream = openEventStream(reply, { 'x-test': 'yes' }, 60_000);
    const socket = reply.raw.socket;
    if (!socket) throw new Error('no socket');
    recorded = await write(stream, () => ({
      corked: socket.writableCorked,
      bytes: socket.writableLength,
    }));
    stream.end();
    return reply;
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const response = await fetch(`${address}/stream`);
  const text = await response.text();
  expect(response.headers.get('x-test')).toBe('yes');
  return { held: recorded, text, contentType: response.headers.get('content-type') };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('A streamed answer', () => {
  it('writes its first event at once, with the headers and the opening held for it', async () => {
    const { held, text, contentType } = await serve(async (stream, probe) => {
      stream.open('{"role":"assistant"}');
      const beforeFirst = probe();
      stream.send('first');
      return { beforeFirst, afterFirst: probe() };
    });
    // Held (corked) until the first event, then handed to the kernel in the same call.
    expect(held.beforeFirst?.corked).toBeGreaterThan(0);
    expect(held.beforeFirst?.bytes).toBeGreaterThan(0);
    expect(held.afterFirst).toEqual({ corked: 0, bytes: 0 });
    expect(contentType).toMatch(/^text\/event-stream/);
    expect(text).toBe(': stream\n\ndata: {"role":"assistant"}\n\ndata: first\n\n');
  });

  it('gathers the events after the first that come in one turn and sends them at its end', async () => {
    const { held, text } = await serve(async (stream, probe) => {
      stream.send('first');
      stream.send('second');
      stream.send('done', 'done');
      const sameTurn = probe();
      await nextTurn();
      const nextTurnProbe = probe();
      stream.send('late');
      const afterLate = probe();
      return { sameTurn, nextTurn: nextTurnProbe, afterLate };
    });
    expect(held.sameTurn?.corked).toBeGreaterThan(0);
    expect(held.sameTurn?.bytes).toBeGreaterThan(0);
    expect(held.nextTurn).toEqual({ corked: 0, bytes: 0 });
    // Not the first event: corked until its own turn ends.
    expect(held.afterLate?.corked).toBeGreaterThan(0);
    expect(text).toBe(
      ': stream\n\ndata: first\n\ndata: second\n\nevent: done\ndata: done\n\ndata: late\n\n',
    );
  });

  it('writes its first event at once also when the opening was sent before it (a slow core)', async () => {
    const { held, text } = await serve(async (stream, probe) => {
      stream.open('{"role":"assistant"}');
      // The opening's hold ends on its own after OPENING_HOLD_MS; wait for the socket.
      const opened = await until(() => {
        const now = probe();
        return now.corked === 0 ? now : undefined;
      }, 'the opening hold to end');
      stream.send('first');
      return { opened, afterFirst: probe() };
    });
    expect(held.opened).toEqual({ corked: 0, bytes: 0 });
    expect(held.afterFirst).toEqual({ corked: 0, bytes: 0 });
    expect(text).toBe(': stream\n\ndata: {"role":"assistant"}\n\ndata: first\n\n');
  });
});
