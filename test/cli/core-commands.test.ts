/**
 * docs/core.md, "Start plauder with each core": the command that starts the `openai` core
 * in front of Ollama, run by bash as written (from the repository's root, on the shipped
 * defaults but for the database and the port), with the fake upstream standing in for
 * Ollama at the address the command names, answers a chat message with the model's reply.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstream, type Upstream } from '../core/openai/upstream-process.js';
import { runCli } from '../helpers/processes.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { http } from '../helpers/test-server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OLLAMA = 'http://127.0.0.1:11434/v1';

/** The shell block under the paragraph that starts with `heading` in docs/core.md. */
function commandUnder(heading: string): string {
  const doc = readFileSync(path.join(ROOT, 'docs/core.md'), 'utf8');
  const at = doc.indexOf(heading);
  if (at === -1) throw new Error(`docs/core.md has no "${heading}"`);
  const block = /```sh\n([\s\S]*?)```/.exec(doc.slice(at))?.[1];
  if (!block) throw new Error(`docs/core.md has no shell block under "${heading}"`);
  return block.trim();
}

/** The test process's environment without its PLAUDER_ settings (the shipped defaults). */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env))
    if (value !== undefined && !name.startsWith('PLAUDER_') && name !== 'PORT') env[name] = value;
  return env;
}

let upstream: Upstream;
let database: TestDatabase;
let server: ChildProcess | undefined;

beforeAll(async () => {
  upstream = await startUpstream();
  database = await createTestDatabase();
});
afterAll(async () => {
  if (server?.pid !== undefined && server.exitCode === null) {
    const exited = new Promise((done) => server?.once('exit', done));
    process.kill(-server.pid, 'SIGTERM');
    await exited;
  }
  await upstream?.stop();
  await database?.drop();
});

/** Starts `command` with bash in its own process group; resolves with the server's URL. */
function startCommand(command: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', command], { cwd: ROOT, env, detached: true, stdio: 'pipe' });
    server = child;
    let output = '';
    const onData = (data: Buffer) => {
      output += data;
      const url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      if (url) resolve(url);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) =>
      reject(new Error(`exited with ${code} before listening:\n${output}`)),
    );
  });
}

describe('docs/core.md: the openai core in front of Ollama', () => {
  it('starts with the command as written and answers with the model reply', async () => {
    const command = commandUnder('**`openai` in front of Ollama**');
    expect(command).toBe(
      `PLAUDER_CORE=openai PLAUDER_OPENAI_BASE_URL=${OLLAMA} PLAUDER_OPENAI_MODEL=llama3.2 node bin/plauder.mjs serve`,
    );
    // Only the upstream's address differs: the fake one listens on a port of its own.
    const env = { ...cleanEnv(), ...database.env, PORT: '0' };
    const url = await startCommand(command.replace(OLLAMA, upstream.baseUrl), env);

    const created = await runCli(
      ['keys', 'create', '--name', 'ollama test', '--plan', 'standard', '--json'],
      { ...database.env },
    );
    expect(created.code, created.stderr).toBe(0);
    const { key } = JSON.parse(created.stdout) as { key: string };
    const res = await http(`${url}/api/chat`, { key, body: { message: 'Hallo Ollama' } });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual({ reply: 'reply to: Hallo Ollama' });

    const { requests } = await upstream.received();
    const chat = requests.find((r) => r.path.endsWith('/chat/completions'));
    expect(chat?.body).toMatchObject({ model: 'llama3.2' });
  });
});
