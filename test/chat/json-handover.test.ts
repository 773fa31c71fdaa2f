/**
 * A reply answered as one JSON body reached the client only once it was handed to the socket
 * whole (docs/contract.md, "The client goes away"): a client that reads the head of a large
 * answer and leaves before the rest was written is refunded, not charged.
 */
import { spawn } from 'node:child_process';
import { describe, expect } from 'vitest';
import { openAiEnv, test } from '../helpers/fixtures.js';
import { until } from '../helpers/sse.js';
import { chat, http, type TestServer } from '../helpers/test-server.js';

const used = (s: TestServer, id: string) =>
  s.services.usage.used(id, s.services.quota.monthOf(Date.now()).month);

/**
 * A client that sends its request and reads nothing, on a socket whose receive buffer is 4 KiB
 * (Python's socket module sets SO_RCVBUF, Node's net cannot), so the socket buffers cannot take
 * a large answer; it resets the connection when told on its standard input.
 */
const SLOW_CLIENT = `
import socket, sys, struct
host, port, key, body = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4].encode()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect((host, port))
s.sendall(("POST /api/chat HTTP/1.1\\r\\nHost: %s\\r\\nAuthorization: Bearer %s\\r\\n"
  "Content-Type: application/json\\r\\nContent-Length: %d\\r\\n\\r\\n" % (host, key, len(body))).encode() + body)
print("sent", flush=True)
sys.stdin.readline()
s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
s.close()
print("closed", flush=True)
`;

function nonReadingClient(url: string, key: string, body: unknown) {
  const { hostname, port } = new URL(url);
  const child = spawn('python3', ['-c', SLOW_CLIENT, hostname, port, key, JSON.stringify(body)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  const said = (word: string) => until(async () => output.includes(word) || undefined, word);
  return {
    sent: () => said('sent'),
    async leave() {
      child.stdin.write('\n');
      await said('closed');
    },
  };
}

describe('a JSON answer that was not written whole', () => {
  test('is refunded when the client leaves before it was written (a 3.5 MB reply to a client that reads nothing), and a whole one counts', async ({
    serve,
    upstream,
  }) => {
    // A session that holds the 3.5 MB turn, so the test sees when the answer is being written.
    const s = await serve({ env: openAiEnv(upstream, { PLAUDER_SESSION_MAX_BYTES: '8388608' }) });
    const { id, key } = await s.createKey();
    // 3.5 MB: far more than the sockets' buffers take from a client that reads nothing.
    await upstream.script({ content: 'a'.repeat(3_500_000) });
    const client = nonReadingClient(s.url, key, { message: 'lang', sessionId: 'gross' });
    await client.sent();
    // The turn is stored just before its answer is written: the answer is on its way.
    await until(
      async () =>
        (await s.services.sessions.read(id, 'gross', Date.now()))?.length ? true : undefined,
      'the turn stored',
    );
    expect(await used(s, id)).toBe(1);
    await client.leave();
    await until(async () => ((await used(s, id)) === 0 ? true : undefined), 'the refund');
    const whole = await chat(s, key, { message: 'kurz' });
    expect(whole.status).toBe(200);
    expect(await used(s, id)).toBe(1);
  });

  test("holds its key's place until it is over: a key with one place has its next turn wait for the unread answer", async ({
    serve,
    upstream,
  }) => {
    // One place per key, and a session that holds the large turn (see above).
    const s = await serve({
      env: openAiEnv(upstream, {
        PLAUDER_PLANS: 'standard=1000+1/concurrent',
        PLAUDER_SESSION_MAX_BYTES: '8388608',
      }),
    });
    const { id, key } = await s.createKey();
    await upstream.script({ content: 'a'.repeat(3_500_000) });
    const client = nonReadingClient(s.url, key, { message: 'lang', sessionId: 'gross' });
    await client.sent();
    await until(
      async () =>
        (await s.services.sessions.read(id, 'gross', Date.now()))?.length ? true : undefined,
      'the turn stored',
    );
    // The core is done and the answer decided, but not handed over: the next turn waits.
    const next = chat(s, key, { message: 'kurz' });
    await until(async () => {
      const metrics = await http(`${s.url}/metrics`);
      return /^plauder_turns_waiting 1$/m.test(metrics.text) || undefined;
    }, 'the next turn waits');
    expect((await upstream.received()).requests).toHaveLength(1);
    await client.leave();
    expect((await next).status).toBe(200);
    expect((await upstream.received()).requests).toHaveLength(2);
  });
});
