/**
 * The service ships with Node options (a smaller V8 young generation, see README
 * "Configuration"): the `plauder` command's shebang and `npm start` must pass the same
 * ones, and the shipped command line must really start the server with them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CLI, startServerProcess } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { chat, startTestServer } from '../helpers/test-server.js';

const root = path.resolve(path.dirname(CLI), '../..');
const shebang = fs.readFileSync(CLI, 'utf8').split('\n', 1)[0] ?? '';

/** `#!/usr/bin/env -S node --a --b` → `['--a', '--b']`. */
function shebangNodeFlags(): string[] {
  const match = /^#!\/usr\/bin\/env -S node((?: --[\w-]+=\S+)*)$/.exec(shebang);
  if (!match) throw new Error(`unexpected shebang: ${shebang}`);
  return (match[1] ?? '').trim().split(/\s+/).filter(Boolean);
}

describe('launching the service', () => {
  it('passes the same Node options from the plauder command and from npm start', () => {
    const flags = shebangNodeFlags();
    expect(flags).toEqual(['--max-semi-space-size=4', '--heap-growing-percent=20']);
    const start = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts
      .start as string;
    expect(start).toContain(`node ${flags.join(' ')} dist/cli/main.js serve`);
  });

  it('starts and answers through the shebang command line, with the options in effect', async () => {
    const database = await createTestDatabase();
    onTestFinished(() => database.drop());
    const setup = await startTestServer({ database, env: { PLAUDER_CORE: 'placeholder' } });
    const { key } = await setup.createKey();
    await setup.close();

    const interpreter = shebang.slice(2).split(' ');
    const proc = await startServerProcess(setup.env, [
      interpreter[0] ?? '',
      ...interpreter.slice(1, 2),
      interpreter.slice(2).join(' '),
    ]);
    onTestFinished(async () => {
      await proc.stop();
    });
    const reply = await chat(proc, key, { message: 'Hallo' });
    expect(reply.status).toBe(200);
    // `env -S` execs node in place: the server's own command line carries the options.
    const pid = proc.child.pid ?? 0;
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(cmdline).toEqual(expect.arrayContaining(shebangNodeFlags()));
    expect(path.basename(cmdline[0] ?? '')).toBe('node');
  });
});
