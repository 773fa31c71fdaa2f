/**
 * Shared set-up for reliability tests that drive a real `plauder serve` process: a database
 * of the vitest project's dialect, keys made through the CLI (in this process, with a
 * connection of its own), and a process that collects garbage on SIGUSR2 so its heap
 * figures mean something.
 */
import { fileURLToPath } from 'node:url';
import { runCliInProcess } from '../../helpers/cli-in-process.js';
import { type ServerProcess, startServerProcess } from '../../helpers/processes.js';
import { createHttpClient, type RawResponse } from './http-client.js';

const GC_ON_SIGNAL = new URL('../fixtures/gc-on-signal.mjs', import.meta.url);

/** `plauder serve` with `--expose-gc` and the SIGUSR2 → gc() hook preloaded. */
export function startMeasuredServer(env: Record<string, string>): Promise<ServerProcess> {
  return startServerProcess(env, [
    process.execPath,
    '--expose-gc',
    '--import',
    fileURLToPath(GC_ON_SIGNAL),
  ]);
}

export async function createKeyWithCli(
  env: Record<string, string>,
  plan = 'standard',
  ...extra: string[]
): Promise<{ id: string; key: string }> {
  const res = await runCliInProcess(
    ['keys', 'create', '--name', 'reliability', '--plan', plan, '--json', ...extra],
    env,
  );
  if (res.code !== 0) throw new Error(`keys create failed (${res.code}): ${res.stderr}`);
  return JSON.parse(res.stdout) as { id: string; key: string };
}

/** One request on a fresh connection, closed afterwards. */
export async function once(
  baseUrl: string,
  method: string,
  path: string,
  key?: string,
  body?: unknown,
): Promise<RawResponse> {
  const client = createHttpClient(baseUrl, 1);
  try {
    const headers: Record<string, string> = {};
    if (key !== undefined) headers.authorization = `Bearer ${key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    return await client.send({
      method,
      path,
      headers,
      ...(body === undefined ? {} : { body: Buffer.from(JSON.stringify(body)) }),
    });
  } finally {
    client.close();
  }
}

export async function usedOf(baseUrl: string, key: string): Promise<number> {
  const res = await once(baseUrl, 'GET', '/api/usage', key);
  if (res.status !== 200) throw new Error(`GET /api/usage answered ${res.status}`);
  return res.json.used as number;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
