/**
 * The limit for any Fastify service in front of the upstream: Fastify takes the chat body,
 * sends the same Chat Completions request plauder's openai core sends (system prompt + the
 * message) over an undici pool with the handler API, reads `choices[0].message.content`
 * and answers `{"reply"}`. No authentication, quota, logging, metrics, timeouts or retries.
 * UPSTREAM names the upstream's base URL (http://127.0.0.1:PORT/v1); PORT picks the port.
 * Prints `listening <port>` once ready.
 */
import Fastify from 'fastify';
import { Pool } from 'undici';
import { DEFAULT_SYSTEM_PROMPTS } from '../../dist/core/openai/openai-config.js';

const upstream = new URL(`${process.env.UPSTREAM}/chat/completions`);
const pool = new Pool(upstream.origin, { connections: 64 });
const headers = { 'content-type': 'application/json', accept: 'application/json' };

function complete(message) {
  const body = JSON.stringify({
    model: 'bench',
    messages: [
      { role: 'system', content: DEFAULT_SYSTEM_PROMPTS.de },
      { role: 'user', content: message },
    ],
    stream: false,
  });
  return new Promise((resolve, reject) => {
    const chunks = [];
    pool.dispatch(
      { path: upstream.pathname, method: 'POST', headers, body },
      {
        onRequestStart: () => {},
        onResponseData: (_controller, chunk) => chunks.push(chunk),
        onResponseEnd: () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))),
        onResponseError: (_controller, error) => reject(error),
      },
    );
  });
}

const app = Fastify({ logger: false });
app.post('/api/chat', async (request) => {
  const completion = await complete(request.body.message);
  return { reply: completion.choices[0].message.content };
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`listening ${app.server.address().port}\n`);
process.on('SIGTERM', () =>
  app
    .close()
    .then(() => pool.close())
    .then(() => process.exit(0)),
);
