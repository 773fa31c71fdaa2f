/**
 * The limit for any Fastify service: Fastify answering every POST with a constant reply.
 * Prints `listening <port>` once ready; PORT picks the port (0 = any free one).
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/api/chat', async () => ({ reply: 'Hallo! Wie kann ich helfen?' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`listening ${app.server.address().port}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
