/**
 * A minimal, fast OpenAI-compatible upstream: `POST …/chat/completions` always answers 200
 * with the same chat completion (content UPSTREAM_REPLY below), anything else 404.
 * It reads each request body in full but does not parse it, so it costs as little as a
 * server can. Prints `listening <port>` once ready; PORT picks the port (0 = any free one).
 */
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const UPSTREAM_REPLY = 'Hallo vom Bench-Upstream!';

const COMPLETION = Buffer.from(
  JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'bench',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: UPSTREAM_REPLY },
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  }),
);
const HEADERS = { 'content-type': 'application/json', 'content-length': COMPLETION.length };

function handle(req, res) {
  const ok = req.method === 'POST' && req.url?.split('?')[0]?.endsWith('/chat/completions');
  req.on('data', () => {});
  req.on('end', () => {
    if (ok) res.writeHead(200, HEADERS).end(COMPLETION);
    else res.writeHead(404, { 'content-length': 0 }).end();
  });
}

// Only when run as a server, so the bench can import UPSTREAM_REPLY.
if (fileURLToPath(import.meta.url) === path.resolve(process.argv[1] ?? '')) {
  const server = http.createServer(handle);
  // Longer than any run: only the clients decide when an idle connection goes away.
  server.keepAliveTimeout = 120_000;
  server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
    process.stdout.write(`listening ${server.address().port}\n`);
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
