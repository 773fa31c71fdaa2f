import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { chat, http, misspelled, startTestServer } from '../helpers/test-server.js';

function expectAbsent(haystack: Buffer, needles: string[], where: string): void {
  for (const needle of needles) {
    const found = [Buffer.from(needle, 'utf8'), Buffer.from(needle, 'utf16le')].some((n) =>
      haystack.includes(n),
    );
    expect(found, `${where} contains "${needle.slice(0, 20)}…"`).toBe(false);
  }
}

describe('canary: no plaintext key and no message text at rest or in logs', () => {
  it('holds for the database files (including -wal) and the logs of an in-process server', async () => {
    const database = await createTestDatabase();
    const server = await startTestServer({ database, env: { PLAUDER_CORE: 'placeholder' } });
    const { key, id } = await server.createKey();
    const message = `Kanarienvogel-${randomBytes(8).toString('hex')} mein Passwort`;
    const sessionId = `canary-session-${randomBytes(6).toString('hex')}`;
    await chat(server, key, { message, sessionId });
    await chat(server, key, { message: `${message} again`, sessionId }, '/api/chat-en');
    await chat(server, key, { message: 42, sessionId });
    await http(`${server.url}/api/sessions/${sessionId}`, { key });
    await http(`${server.url}/api/chat?key=${key}`, { body: { message } });
    const rotated = await server.services.keys.rotate(id, 60_000);
    if (!rotated.ok) throw new Error('rotate failed');
    await chat(server, rotated.value.key, { message, sessionId });

    // The turns are readable through the API, so they are really stored...
    const stored = await http(`${server.url}/api/sessions/${sessionId}`, {
      key: rotated.value.key,
    });
    expect(stored.json.turns[0].message).toBe(message);

    // ...but only sealed: check while the WAL still holds the writes, then after the checkpoint.
    if (database.dialect === 'sqlite') expect(fs.existsSync(`${database.file}-wal`)).toBe(true);
    const needles = [key, rotated.value.key, key.slice(12), message, 'Kanarienvogel', sessionId];
    const contents = await database.contents();
    // The dump really holds the stored rows: the key id is there in plain text.
    expect(contents.includes(Buffer.from(id))).toBe(true);
    expectAbsent(contents, needles, 'database files');
    expectAbsent(Buffer.from(server.logs.join('\n')), needles, 'logs');
    expect(server.logs.length).toBeGreaterThan(5);
    await server.close();
    try {
      expectAbsent(await database.contents(), needles, 'database files after close');
    } finally {
      await database.drop();
    }
  });

  it('holds for the output of a real server process and the CLI', async () => {
    const server = await startTestServer({ env: { PLAUDER_CORE: 'placeholder' } });
    const created = await runCli(
      ['keys', 'create', '--name', 'canary', '--plan', 'standard', '--json'],
      server.env,
    );
    const { key, id } = JSON.parse(created.stdout) as { key: string; id: string };
    let proc: ServerProcess | undefined;
    try {
      proc = await startServerProcess({ ...server.env, PLAUDER_LOG_LEVEL: 'trace' });
      const message = `Kanarienvogel-${randomBytes(8).toString('hex')}`;
      const res = await chat(proc, key, { message, sessionId: 'cli-canary' });
      expect(res.status).toBe(200);
      await chat(proc, misspelled(key), { message });
      const listed = await runCli(['keys', 'list', '--json'], server.env);
      const usage = await runCli(['usage', '--json'], server.env);
      expect(listed.stdout).toContain(id);
      const text = Buffer.from(proc.output() + listed.stdout + listed.stderr + usage.stdout);
      expectAbsent(text, [key, key.slice(12), message], 'process output');
      expectAbsent(
        await server.database.contents(),
        [key, key.slice(12), message],
        'database files',
      );
    } finally {
      await proc?.stop();
      await server.close();
    }
  });
});
