/**
 * The service runs with Node's default heap settings (docs/configuration.md says how to
 * trade CPU for memory): the `plauder` command's shebang and `npm start` pass no Node
 * options, and the shebang is the portable one (no `env -S`, which BusyBox lacks).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CLI, startServerProcess } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { chat, startTestServer } from '../helpers/test-server.js';

const root = path.resolve(path.dirname(CLI), '../..');
const shebang = fs.readFileSync(CLI, 'utf8').split('\n', 1)[0] ?? '';

describe('launching the service', () => {
  it('passes no Node options, from the plauder command or from npm start', () => {
    expect(shebang).toBe('#!/usr/bin/env node');
    const start = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts
      .start as string;
    expect(start).toBe('node dist/cli/main.js serve');
  });

  it('starts and answers through the shebang command line', async () => {
    const database = await createTestDatabase();
    onTestFinished(() => database.drop());
    const setup = await startTestServer({ database, env: { PLAUDER_CORE: 'placeholder' } });
    const { key } = await setup.createKey();
    await setup.close();

    const [env = '', node = ''] = shebang.slice(2).split(' ');
    const proc = await startServerProcess(setup.env, [env, node]);
    onTestFinished(async () => {
      await proc.stop();
    });
    const reply = await chat(proc, key, { message: 'Hallo' });
    expect(reply.status).toBe(200);
    // `env` execs node in place: the server's own command line has no Node options.
    const pid = proc.child.pid ?? 0;
    const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    expect(path.basename(cmdline[0] ?? '')).toBe('node');
    expect(cmdline.filter((arg) => arg.startsWith('--'))).toEqual([]);
  });
});
