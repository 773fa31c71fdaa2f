/**
 * The limit for any Fastify service in front of the upstream: Fastify takes the chat body,
 * sends the same Chat Completions request plauder's openai core sends
 * (servers/bare-completion.mjs), reads `choices[0].message.content` and answers
 * `{"reply"}`. No authentication, quota, logging, metrics, timeouts or retries.
 * UPSTREAM names the upstream's base URL (http://127.0.0.1:PORT/v1); PORT picks the port.
 * Prints `listening <port>` once ready.
 */
import Fastify from 'fastify';
import { createBareCompletion } from './bare-completion.mjs';

const { complete, close } = createBareCompletion(process.env.UPSTREAM);

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
    .then(close)
    .then(() => process.exit(0)),
);
