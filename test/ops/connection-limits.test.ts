/**
 * Slow clients and connection floods, on a real server over loopback: headers and whole
 * requests have deadlines (408 with the envelope), and thousands of keyless idle or
 * trickling connections do not keep keyed clients or /healthz from being served.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { chat, http, startTestServer, type TestServer } from '../helpers/test-server.js';

const LIMITS = {
  PLAUDER_CORE: 'placeholder',
  PLAUDER_HEADERS_TIMEOUT: '400ms',
  PLAUDER_REQUEST_TIMEOUT: '800ms',
  PLAUDER_KEEP_ALIVE_TIMEOUT: '500ms',
  PLAUDER_MAX_CONNECTIONS: '300',
  PLAUDER_LOG_LEVEL: 'warn',
};

let server: TestServer;
let port: number;

beforeAll(async () => {
  server = await startTestServer({ env: LIMITS });
  port = Number(new URL(server.url).port);
});
afterAll(() => server.close());

/** Opens a raw connection, writes `first`, and collects what the server sends until it closes. */
function rawClient(first: string) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    received += chunk;
  });
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  socket.once('connect', () => socket.write(first));
  return { socket, closed };
}

function parse(response: string) {
  const [head = '', body = ''] = response.split('\r\n\r\n');
  return { statusLine: head.split('\r\n')[0], head, json: body ? JSON.parse(body) : undefined };
}

describe('deadlines for slow clients', () => {
  it('answers 408 request_timeout when the headers do not arrive in time', async () => {
    const started = Date.now();
    const { closed } = rawClient('POST /api/chat HTTP/1.1\r\nHost: x\r\nAuthorization: Bea');
    const response = parse(await closed);
    expect(response.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(response.head).toMatch(/connection: close/i);
    expect(response.json.error).toMatchObject({ code: 'request_timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('answers 408 when a body trickles in slower than the request timeout allows', async () => {
    const { key } = await server.createKey();
    const started = Date.now();
    const { socket, closed } = rawClient(
      'POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${key}\r\nContent-Length: 200\r\n\r\n{`,
    );
    const trickle = setInterval(() => socket.writable && socket.write(' '), 100);
    const response = parse(await closed);
    clearInterval(trickle);
    expect(response.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(response.json.error).toMatchObject({ code: 'request_timeout' });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('closes a connection that never sends a byte', async () => {
    const { closed } = rawClient('');
    expect(parse(await closed).statusLine).toBe('HTTP/1.1 408 Request Timeout');
  });
});

describe('a flood of keyless idle and trickling connections', () => {
  it('keeps serving keyed clients and /healthz', async () => {
    // Timeouts long enough that the cap, not the deadline, is what pushes attackers out.
    const server = await startTestServer({
      env: { ...LIMITS, PLAUDER_HEADERS_TIMEOUT: '10s', PLAUDER_REQUEST_TIMEOUT: '20s' },
    });
    onTestFinished(() => server.close());
    const port = Number(new URL(server.url).port);
    const { key } = await server.createKey();
    const attackers: net.Socket[] = [];
    const trickles: NodeJS.Timeout[] = [];
    const FIRST_WAVE = 3000;
    const SECOND_WAVE = 1000;
    const cap = Number(LIMITS.PLAUDER_MAX_CONNECTIONS);
    /** Half send nothing, half send a header line now and then, never finishing. */
    const open = (i: number) =>
      new Promise<void>((settled) => {
        const socket = net.connect({ port, host: '127.0.0.1' });
        socket.on('error', () => {});
        socket.once('close', () => settled());
        socket.once('connect', () => {
          settled();
          if (i % 2 === 1) {
            socket.write('POST /api/chat HTTP/1.1\r\nHost: x\r\n');
            trickles.push(setInterval(() => socket.writable && socket.write('X-a: b\r\n'), 100));
          }
        });
        attackers.push(socket);
      });
    const wave = async (from: number, count: number) => {
      const opened: Promise<void>[] = [];
      for (let i = from; i < from + count; i++) {
        opened.push(open(i));
        if (i % 100 === 99) await new Promise((resolve) => setImmediate(resolve));
      }
      await Promise.all(opened);
    };
    // The connections the server holds: accepted and not destroyed. (Node's own count,
    // `getConnections`, drops a socket the guard destroyed only once its close callback
    // has run, so during a burst of arrivals it counts sockets already let go.) This
    // listener runs after the guard's, which has made its choice by then.
    const held = new Set<net.Socket>();
    server.app.server.on('connection', (socket: net.Socket) => {
      held.add(socket);
      socket.once('close', () => held.delete(socket));
    });
    const count = async () => [...held].filter((socket) => !socket.destroyed).length;

    // The server is full of attackers before the keyed client starts...
    await wave(0, FIRST_WAVE);
    const full = await count();
    // ...and a second wave keeps arriving while it chats.
    const second = wave(FIRST_WAVE, SECOND_WAVE);
    const latencies: number[] = [];
    const health: number[] = [];
    const statuses: number[] = [];
    const connections: number[] = [full];
    for (let round = 0; round < 20; round++) {
      let started = performance.now();
      statuses.push((await chat(server, key, { message: 'hallo' })).status);
      latencies.push(performance.now() - started);
      started = performance.now();
      statuses.push((await http(`${server.url}/healthz`)).status);
      health.push(performance.now() - started);
      connections.push(await count());
    }
    await second;
    for (const timer of trickles) clearInterval(timer);
    for (const socket of attackers) socket.destroy();

    expect(attackers).toHaveLength(FIRST_WAVE + SECOND_WAVE);
    expect(full).toBeGreaterThan(cap * 0.8);
    expect(statuses).toEqual(Array(40).fill(200));
    // The server held at most its cap (a newcomer counts until it is closed); the rest
    // of the flood was pushed out.
    expect(Math.max(...connections)).toBeLessThanOrEqual(cap + 1);
    const p = (values: number[], q: number) =>
      [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) * q)] ?? 0;
    // Generous for a shared, busy test machine; a stall behind the flood takes seconds.
    expect(p(latencies, 0.5)).toBeLessThan(500);
    expect(p(health, 0.5)).toBeLessThan(500);
    console.info(
      `flood of ${FIRST_WAVE}+${SECOND_WAVE} keyless connections (cap ${cap}): ` +
        `${latencies.length} keyed chats p50 ${p(latencies, 0.5).toFixed(1)} ms ` +
        `max ${Math.max(...latencies).toFixed(1)} ms; /healthz p50 ${p(health, 0.5).toFixed(1)} ms ` +
        `max ${Math.max(...health).toFixed(1)} ms; server connections at most ${Math.max(...connections)}`,
    );
  });
});
