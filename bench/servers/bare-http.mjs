/**
 * The limit, without a framework: `node:http` answering every POST with a constant reply.
 * Prints `listening <port>` once ready; PORT picks the port (0 = any free one).
 */
import http from 'node:http';

const BODY = Buffer.from(JSON.stringify({ reply: 'Hallo! Wie kann ich helfen?' }));
const HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'content-length': BODY.length,
};

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(404).end();
    return;
  }
  // Read the body like a real service would, then answer.
  req.on('data', () => {});
  req.on('end', () => res.writeHead(200, HEADERS).end(BODY));
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
