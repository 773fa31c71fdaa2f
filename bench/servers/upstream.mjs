/**
 * A minimal, fast OpenAI-compatible upstream: `POST …/chat/completions` always answers 200
 * with the same chat completion (content UPSTREAM_REPLY below), anything else 404.
 * It reads each request body in full but does not parse it, so it costs as little as a
 * server can. Prints `listening <port>` once ready; PORT picks the port (0 = any free one).
 * A body containing `"stream":true` is answered as OpenAI streams: chat.completion.chunk
 * events (the role, UPSTREAM_REPLY in STREAM_PIECES, finish_reason, usage) and
 * `data: [DONE]`, with STREAM_GAP_MS (default 0) between the pieces.
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

export const STREAM_PIECES = ['Hallo ', 'vom ', 'Bench-Upstream!'];
const chunk = (choices, extra = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'bench', choices, ...extra })}\n\n`;
const delta = (value, finish = null) => chunk([{ index: 0, delta: value, finish_reason: finish }]);
const STREAM_HEAD = delta({ role: 'assistant', content: '' });
const STREAM_PARTS = STREAM_PIECES.map((content) => delta({ content }));
const STREAM_TAIL =
  delta({}, 'stop') +
  chunk([], { usage: { prompt_tokens: 1, completion_tokens: 3, total_tokens: 4 } }) +
  'data: [DONE]\n\n';
const STREAM_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
const GAP_MS = Number(process.env.STREAM_GAP_MS ?? 0);

function handle(req, res) {
  const ok = req.method === 'POST' && req.url?.split('?')[0]?.endsWith('/chat/completions');
  let streamed = false;
  req.on('data', (data) => {
    if (!streamed && data.includes('"stream":true')) streamed = true;
  });
  req.on('end', () => {
    if (!ok) res.writeHead(404, { 'content-length': 0 }).end();
    else if (streamed) stream(res);
    else res.writeHead(200, HEADERS).end(COMPLETION);
  });
}

async function stream(res) {
  res.writeHead(200, STREAM_HEADERS);
  res.write(STREAM_HEAD);
  for (const part of STREAM_PARTS) {
    if (GAP_MS > 0) await new Promise((resolve) => setTimeout(resolve, GAP_MS));
    res.write(part);
  }
  res.end(STREAM_TAIL);
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
