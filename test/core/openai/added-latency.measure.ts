/**
 * Measures the median latency the openai adapter adds over the leanest direct client:
 * one keep-alive `node:http` request with the same JSON body, parsing the JSON reply.
 * The global `fetch` (undici) is measured too, for comparison. Requests are interleaved (in
 * rotating order) so drift affects all three alike. Run: npx vitest run -c test/core/openai/measure.vitest.config.ts
 */

import http from 'node:http';
import { expect, it } from 'vitest';
import type { CoreRequest } from '../../../src/core/core-adapter.js';
import { buildChatRequest } from '../../../src/core/openai/chat-wire.js';
import {
  chatCompletionsUrl,
  createOpenAiCore,
} from '../../../src/core/openai/create-openai-core.js';
import { startUpstream, testOptions } from './upstream-process.js';

const ROUNDS = Number(process.env.ROUNDS ?? 3000);
const WARM_UP = 300;

type Client = (request: CoreRequest) => Promise<string>;

it('reports the median added latency of the adapter against the local upstream', async () => {
  const upstream = await startUpstream();
  const options = testOptions(upstream.baseUrl, { maxConnections: 1 });
  const core = createOpenAiCore(options);
  const url = chatCompletionsUrl(options.baseUrl);
  const headers = {
    'content-type': 'application/json',
    authorization: `Bearer ${options.apiKey}`,
  };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const clients: Record<string, Client> = {
    adapter: (request) => core.reply(request),
    'direct node:http': (request) => {
      const body = JSON.stringify(buildChatRequest(options, request));
      return new Promise((resolve, reject) => {
        const req = http.request(url, { method: 'POST', agent, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve(contentOf(Buffer.concat(chunks).toString('utf8'))));
        });
        req.on('error', reject);
        req.end(body);
      });
    },
    'direct fetch': async (request) => {
      const body = JSON.stringify(buildChatRequest(options, request));
      const response = await fetch(url, { method: 'POST', headers, body });
      return contentOf(await response.text());
    },
  };
  const samples = await measure(clients);
  report(samples);
  await core.close?.();
  agent.destroy();
  await upstream.stop();
  expect(samples.adapter).toHaveLength(ROUNDS);
});

function contentOf(text: string): string {
  return JSON.parse(text).choices[0].message.content.trim();
}

async function measure(clients: Record<string, Client>): Promise<Record<string, number[]>> {
  const samples: Record<string, number[]> = Object.fromEntries(
    Object.keys(clients).map((name) => [name, []]),
  );
  for (let round = -WARM_UP; round < ROUNDS; round++) {
    // Rotate who goes first each round so ordering effects hit every client alike.
    const entries = Object.entries(clients);
    const shift = (round + WARM_UP) % entries.length;
    for (const [name, client] of [...entries.slice(shift), ...entries.slice(0, shift)]) {
      const request: CoreRequest = {
        language: 'en',
        message: `round ${round}`,
        history: [{ message: 'Hi, I am Ada.', reply: 'Hello Ada!', language: 'en' }],
        signal: new AbortController().signal,
      };
      const started = process.hrtime.bigint();
      const reply = await client(request);
      const micros = Number(process.hrtime.bigint() - started) / 1000;
      if (reply !== `reply to: round ${round}`) throw new Error(`${name} got a wrong reply`);
      if (round >= 0) samples[name]?.push(micros);
    }
  }
  return samples;
}

function report(samples: Record<string, number[]>): void {
  const at = (sorted: number[], q: number) => sorted[Math.floor(q * (sorted.length - 1))] ?? 0;
  const rows: Record<string, Record<string, string>> = {};
  const medians: Record<string, number> = {};
  for (const [name, values] of Object.entries(samples)) {
    const sorted = [...values].sort((a, b) => a - b);
    medians[name] = at(sorted, 0.5);
    rows[name] = Object.fromEntries(
      [0.5, 0.9, 0.99].map((q) => [`p${q * 100} µs`, at(sorted, q).toFixed(0)]),
    );
  }
  console.log(
    `openai adapter latency, ${ROUNDS} sequential requests each (Node ${process.version})`,
  );
  console.table(rows);
  const added = (medians.adapter ?? 0) - (medians['direct node:http'] ?? 0);
  console.log(`median added by the adapter over direct node:http: ${added.toFixed(0)} µs`);
}
