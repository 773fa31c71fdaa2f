/**
 * The happy path against an independent OpenAI-compatible mock server from npm
 * (`openai-mock-api`, a devDependency), run as its own process: a second opinion on the wire
 * format besides our own fixture.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoreAdapter, CoreRequest, Turn } from '../../../src/core/core-adapter.js';
import { createOpenAiCore } from '../../../src/core/openai/create-openai-core.js';
import { deadPort, testOptions } from './upstream-process.js';

const KEY = 'sk-mock-api-key';
const CONFIG = `
apiKey: '${KEY}'
responses:
  - id: memory
    messages:
      - { role: system, matcher: any }
      - { role: user, content: 'Ich heiße Ada.' }
      - { role: assistant, content: 'Hallo Ada!' }
      - { role: user, content: 'Wie heiße ich?' }
      - { role: assistant, content: 'Du heißt Ada.' }
  - id: weather
    messages:
      - { role: system, matcher: any }
      - { role: user, content: weather, matcher: contains }
      - { role: assistant, content: 'It is sunny.' }
`;

let server: ChildProcess;
let baseUrl: string;
const cores: CoreAdapter[] = [];

beforeAll(async () => {
  const require = createRequire(import.meta.url);
  const cli = path.join(
    path.dirname(require.resolve('openai-mock-api/package.json')),
    'dist/cli.js',
  );
  // It cannot listen on port 0 (it falls back to 3000), so pick a free port first.
  const port = await deadPort();
  server = spawn(process.execPath, [cli, '--config', '-', '--port', String(port)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  server.stdin?.end(CONFIG);
  await new Promise<void>((resolve, reject) => {
    server.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString('utf8').includes('started on port')) resolve();
    });
    server.once('exit', (code) => reject(new Error(`openai-mock-api exited with ${code}`)));
  });
  baseUrl = `http://127.0.0.1:${port}/v1`;
});

afterAll(async () => {
  await Promise.all(cores.map((core) => core.close?.()));
  server.kill('SIGTERM');
});

function open(apiKey: string): CoreAdapter {
  const core = createOpenAiCore(testOptions(baseUrl, { apiKey, maxRetries: 0 }));
  cores.push(core);
  return core;
}

function ask(message: string, language: 'de' | 'en', history: Turn[] = []): CoreRequest {
  return { message, language, history, signal: new AbortController().signal };
}

describe('openai core against openai-mock-api', () => {
  it('gets a reply for an English message', async () => {
    await expect(open(KEY).reply(ask("How's the weather?", 'en'))).resolves.toBe('It is sunny.');
  });

  it('sends the history in an order a third-party server matches', async () => {
    const history: Turn[] = [{ message: 'Ich heiße Ada.', reply: 'Hallo Ada!', language: 'de' }];
    await expect(open(KEY).reply(ask('Wie heiße ich?', 'de', history))).resolves.toBe(
      'Du heißt Ada.',
    );
  });

  it('fails with core_unavailable on a wrong API key (HTTP 401)', async () => {
    await expect(open('sk-wrong').reply(ask('weather', 'en'))).rejects.toMatchObject({
      code: 'core_unavailable',
      message: expect.stringContaining('HTTP 401'),
    });
  });
});
