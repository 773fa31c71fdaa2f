import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCli, type ServerProcess, startServerProcess } from '../helpers/processes.js';
import { createTestDatabase, withClient } from '../helpers/test-database.js';
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

  it('reads what a database holds in clear, also where only its WAL still holds it', async () => {
    // The checks above can only fail if `contents()` sees what was written: a value written
    // in clear to a table dropped at once is left nowhere but in the WAL (PostgreSQL) or in
    // the file's freed pages (SQLite).
    const database = await createTestDatabase();
    const canary = `clear-canary-${randomBytes(8).toString('hex')}`;
    try {
      if (database.dialect === 'postgres') {
        await withClient(database.env.PLAUDER_DATABASE_URL ?? '', async (client) => {
          await client.query('create table canary_probe (value text)');
          await client.query('insert into canary_probe values ($1)', [canary]);
          await client.query('drop table canary_probe');
        });
      } else {
        const sqlite = new SqliteDatabase(database.file);
        sqlite.pragma('journal_mode = WAL');
        sqlite.exec('create table canary_probe (value text)');
        sqlite.prepare('insert into canary_probe values (?)').run(canary);
        sqlite.exec('drop table canary_probe');
        sqlite.close();
      }
      expect((await database.contents()).includes(Buffer.from(canary))).toBe(true);
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
