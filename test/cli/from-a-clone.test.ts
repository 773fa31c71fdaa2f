/**
 * The CLI from a clone: `bin/plauder.mjs` runs the built CLI at once, and says what to do
 * when `dist/` is missing; the README's first-reply lines, run as written by bash against a
 * real server, either get a reply or fail loudly without sending anything.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LAUNCHER = path.join(ROOT, 'bin/plauder.mjs');

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command with only the variables given (and PATH), in `cwd`. */
function run(command: string, args: string[], env: Record<string, string>, cwd = ROOT) {
  return new Promise<Run>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: 'pipe',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The shell block of the README's "A first reply", pointed at `url` instead of port 3000. */
function firstReplySnippet(url: string): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### A first reply'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('the README has no shell block under "A first reply"');
  expect(block).toContain('http://127.0.0.1:3000');
  return block.replaceAll('http://127.0.0.1:3000', url);
}

describe('bin/plauder.mjs', () => {
  it('runs the built CLI', async () => {
    const version = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
    const res = await run(process.execPath, [LAUNCHER, '--version'], {});
    expect(res).toMatchObject({ code: 0, stdout: `plauder ${version}\n` });
  });

  it('says how to build when dist/ is missing, and exits 1', async () => {
    const clone = mkdtempSync(path.join(tmpdir(), 'plauder-clone-'));
    try {
      mkdirSync(path.join(clone, 'bin'));
      copyFileSync(LAUNCHER, path.join(clone, 'bin/plauder.mjs'));
      const res = await run(process.execPath, ['bin/plauder.mjs', '--version'], {}, clone);
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(/dist\/cli\/main\.js is missing: build it with `npm run build`/);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
  });
});

describe("the README's first reply", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ env: { PLAUDER_CORE: 'builtin' } });
  });
  afterAll(() => server.close());

  it('creates a key and gets a reply with it', async () => {
    const res = await run('bash', ['-c', firstReplySnippet(server.url)], server.env);
    expect(res.code, res.stderr).toBe(0);
    const body = JSON.parse(res.stdout) as { reply?: unknown };
    expect(typeof body.reply).toBe('string');
    expect(body.reply).not.toBe('');
  });

  it('fails loudly and sends nothing when no key can be made', async () => {
    const before = (await server.services.keys.list()).length;
    const res = await run('bash', ['-c', firstReplySnippet(server.url)], {
      ...server.env,
      PLAUDER_PLANS: 'standard=lots',
    });
    expect(res.code).not.toBe(0);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/PLAUDER_PLANS/);
    expect((await server.services.keys.list()).length).toBe(before);
  });
});
