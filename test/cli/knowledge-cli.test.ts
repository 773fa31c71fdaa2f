/**
 * `plauder kb check` and `plauder ask`: an operator checks a knowledge file (every problem
 * at once, with file and line) and tries questions on it. The commands run in this process
 * (runCliInProcess); the built executable is run for a failing check's exit code and
 * stderr, and as the server that reloads its knowledge file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { runCli, startServerProcess } from '../helpers/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'plauder-kb-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SHOP = fileURLToPath(new URL('../core/builtin/fixtures/shop.kb', import.meta.url));

describe('plauder kb check', () => {
  it('accepts the shipped knowledge base', async () => {
    const res = await runCliInProcess(['kb', 'check'], {});
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/knowledge\/plauder\.kb: ok, \d+ entries/);
  });

  it('reports every problem of a broken file with its line, and fails', async () => {
    const file = join(dir, 'broken.kb');
    writeFileSync(
      file,
      [
        'synonyms: wetter',
        '[weather]',
        'topic-de: Wetter',
        'keywords: und, wetter',
        'de: Es regnet {nope}.',
        'en: It rains.',
        '[Weather 2]',
        'colour: blue',
      ].join('\n'),
    );
    const res = await runCli(['kb', 'check', file], {});
    expect(res.code).toBe(1);
    const lines = res.stderr.trim().split('\n');
    expect(lines).toEqual([
      `${file}:1: "synonyms:" needs at least two words`,
      `${file}:2: entry [weather] has no "topic-en:"`,
      `${file}:4: keyword "und" has only stop words and can never match`,
      `${file}:5: unknown placeholder {nope} in entry [weather] (see knowledge/README.md)`,
      `${file}:7: entry id "Weather 2" must be lower-case letters, digits and "-"`,
      `${file}:7: entry [Weather 2] has no "topic-de:"`,
      `${file}:7: entry [Weather 2] has no "topic-en:"`,
      `${file}:7: entry [Weather 2] has neither "example:" nor "keywords:"`,
      `${file}:7: entry [Weather 2] has no "de:"`,
      `${file}:7: entry [Weather 2] has no "en:"`,
      `${file}:8: unknown field "colour:" in entry [Weather 2] (known: topic-de, topic-en, example, keywords, requires, de, en)`,
      `11 problems in ${file}`,
    ]);
  });

  it('checks the file PLAUDER_KNOWLEDGE names', async () => {
    const res = await runCliInProcess(['kb', 'check'], { PLAUDER_KNOWLEDGE: SHOP });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`${SHOP}: ok, 12 entries`);
  });
});

describe('plauder ask', () => {
  it('answers from the configured knowledge base and facts, in the chosen language', async () => {
    const en = await runCliInProcess(
      ['ask', '--lang', 'en', 'How many requests do I get on plus?'],
      {
        PLAUDER_PLANS: 'standard=1000,plus=7500',
      },
    );
    expect(en.code, en.stderr).toBe(0);
    expect(en.stdout).toMatch(/Plus plan gives you 7500 requests/);
    const de = await runCliInProcess(['ask', 'Wie lange dauert die Lieferung?'], {
      PLAUDER_KNOWLEDGE: SHOP,
    });
    expect(de.stdout).toMatch(/1 bis 3 Werktagen/);
  });

  it('plays several messages as one conversation and explains each reply', async () => {
    const res = await runCliInProcess(
      ['ask', '--lang', 'en', '--explain', 'What is a session?', 'And how long is it kept?'],
      {},
    );
    expect(res.code, res.stderr).toBe(0);
    const [first, second] = res.stdout.split('> And how long is it kept?');
    expect(first).toMatch(/answer \[session\]/);
    expect(first).toMatch(/^\s+\d\.\d{3}\s+\[session\]$/m);
    expect(second).toMatch(/30 days/);
    expect(second).toMatch(/topic: \[session\]/);
    expect(second).toMatch(/read as a follow-up: answer \[session-retention\]/);
  });

  it('refuses a missing message and an unknown language', async () => {
    expect((await runCliInProcess(['ask'], {})).code).toBe(2);
    expect((await runCliInProcess(['ask', '--lang', 'fr', 'Salut'], {})).code).toBe(2);
  });
});

describe('a running server and its knowledge file', () => {
  it('reloads the file on SIGHUP, and keeps the old one when the new one is broken', async () => {
    const file = join(dir, 'server.kb');
    const entry = (answer: string) =>
      `[weather]\ntopic-de: Wetter\ntopic-en: weather\nkeywords: wetter, weather\nde: ${answer}\nen: ${answer}\n`;
    writeFileSync(file, entry('It rains.'));
    const env = {
      PLAUDER_DATABASE_URL: `sqlite:${join(dir, 'server.db')}`,
      PLAUDER_KNOWLEDGE: file,
    };
    const created = await runCliInProcess(
      ['keys', 'create', '--name', 'kb', '--plan', 'standard', '--json'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const { key } = JSON.parse(created.stdout) as { key: string };
    const server = await startServerProcess(env);
    onTestFinished(async () => {
      await server.stop();
    });
    const ask = async () => {
      const res = await fetch(`${server.url}/api/chat-en`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ message: 'How is the weather?' }),
      });
      return ((await res.json()) as { reply: string }).reply;
    };
    const logged = async (text: string, times: number) => {
      for (let i = 0; i < 100; i++) {
        if (server.output().split(text).length - 1 >= times) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`no "${text}" in the log:\n${server.output()}`);
    };
    expect(await ask()).toBe('It rains.');
    writeFileSync(file, `${entry('Snow.')}colour: blue\n`);
    server.child.kill('SIGHUP');
    await logged('knowledge base not reloaded', 1);
    expect(server.output()).toContain('server.kb:7: unknown field \\"colour:\\"');
    expect(await ask()).toBe('It rains.');
    writeFileSync(file, entry('The sun shines.'));
    server.child.kill('SIGHUP');
    await logged('knowledge base reloaded', 1);
    expect(await ask()).toBe('The sun shines.');
  });
});
