// The limit: a bare Fastify server answering every POST with a constant reply.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.post('/api/chat', async () => ({ reply: 'Hallo! Wie kann ich helfen?' }));
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });
process.stdout.write(`listening ${app.server.address().port}\n`);
process.on('SIGTERM', () => app.close().then(() => process.exit(0)));
