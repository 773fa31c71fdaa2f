/**
 * The limit for any streaming proxy in front of the upstream: Fastify takes the chat body,
 * sends the Chat Completions request plauder's openai core sends (system prompt + the
 * message, `"stream": true`) over an undici pool and hands the upstream's event stream to
 * the client byte for byte as it arrives. No authentication, quota, parsing, logging,
 * metrics or timeouts. UPSTREAM names the upstream's base URL (http://127.0.0.1:PORT/v1);
 * PORT picks the port. Prints `listening <port>` once ready.
 */
import Fastify from 'fastify';
import { Pool } from 'undici';
import { DEFAULT_SYSTEM_PROMPTS } from '../../dist/core/openai/openai-config.js';

const upstream = new URL(`${process.env.UPSTREAM}/chat/completions`);
const pool = new Pool(upstream.origin, { connections: 64 });
const headers = { 'content-type': 'application/json', accept: 'text/event-stream' };

const app = Fastify({ logger: false });
app.post('/api/chat', async (request, reply) => {
  const body = JSON.stringify({
    model: 'bench',
    messages: [
      { role: 'system', content: DEFAULT_SYSTEM_PROMPTS.de },
      { role: 'user', content: request.body.message },
    ],
    stream: true,
  });
  const response = await pool.request({ path: upstream.pathname, method: 'POST', headers, body });
  return reply.header('content-type', 'text/event-stream').send(response.body);
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`listening ${app.server.address().port}\n`);
process.on('SIGTERM', () =>
  app
    .close()
    .then(() => pool.close())
    .then(() => process.exit(0)),
);
