/**
 * The floor's model-server client (servers/bare-proxy.mjs): the
 * Chat Completions request plauder's openai core sends (system prompt + the message) over
 * an undici pool with the handler API, the answer's JSON parsed. No timeouts or retries.
 */
import { Pool } from 'undici';
import { DEFAULT_SYSTEM_PROMPTS } from '../../dist/core/openai/openai-config.js';

/** `baseUrl` as the openai core takes it (http://127.0.0.1:PORT/v1). */
export function createBareCompletion(baseUrl) {
  const url = new URL(`${baseUrl}/chat/completions`);
  const pool = new Pool(url.origin, { connections: 64 });
  const headers = { 'content-type': 'application/json', accept: 'application/json' };
  return {
    /** Resolves with the parsed chat completion. */
    complete(message) {
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
          { path: url.pathname, method: 'POST', headers, body },
          {
            onRequestStart: () => {},
            onResponseData: (_controller, chunk) => chunks.push(chunk),
            onResponseEnd: () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))),
            onResponseError: (_controller, error) => reject(error),
          },
        );
      });
    },
    close: () => pool.close(),
  };
}
