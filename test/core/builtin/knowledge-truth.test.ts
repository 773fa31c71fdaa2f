/**
 * What the built-in core says about the service is true: its figures come from the
 * running configuration, and the shipped knowledge base agrees with the documentation (README.md and docs/).
 * A knowledge file is reloaded while the core runs, keeping the old one when the new one
 * is broken.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import {
  createBuiltinCore,
  KnowledgeBaseError,
  loadKnowledgeIndex,
  type ReloadResult,
} from '../../../src/core/builtin/create-builtin-core.js';
import { readServiceFacts, type ServiceFacts } from '../../../src/core/builtin/service-facts.js';
import type { Language } from '../../../src/core/core-adapter.js';

const signal = new AbortController().signal;
const ROOT = new URL('../../../', import.meta.url);
/** The README and the pages under docs/, where the project documents itself. */
const README = [
  readFileSync(fileURLToPath(new URL('README.md', ROOT)), 'utf8'),
  ...(existsSync(fileURLToPath(new URL('docs/', ROOT)))
    ? readdirSync(fileURLToPath(new URL('docs/', ROOT)))
        .filter((file) => file.endsWith('.md'))
        .map((file) => readFileSync(fileURLToPath(new URL(`docs/${file}`, ROOT)), 'utf8'))
    : []),
].join('\n');
/**
 * Names of the per-key concurrency limit, which the knowledge base answers about from the
 * configuration (`{key-concurrency}`) and which the documentation describes with the limit.
 */
const CLI = readFileSync(fileURLToPath(new URL('docs/cli.md', ROOT)), 'utf8');
const DOCUMENTED_WITH_THEIR_FEATURE = new Set(['PLAUDER_KEY_CONCURRENCY', 'too_many_concurrent']);

const CUSTOM: ServiceFacts = {
  plans: [
    { name: 'basic', monthly: 100 },
    { name: 'premium', monthly: 2500, perMinute: 60 },
  ],
  quotaTimeZone: 'Europe/Berlin',
  sessionTtlMs: 7 * 86_400_000,
  sessionWindow: 10,
  messageMaxChars: 2000,
  idempotencyTtlMs: 3_600_000,
  keyConcurrency: 4,
};

describe('facts from the running configuration', () => {
  const core = createBuiltinCore({ facts: CUSTOM });
  const ask = (
    language: Language,
    message: string,
    history: { message: string; reply: string; language: Language }[] = [],
  ) => core.reply({ language, message, history, signal });

  it.each([
    [
      'en',
      'Which plans are there?',
      [/two plans/, /Basic with 100 requests/, /Premium with 2500 requests/],
    ],
    [
      'de',
      'Welche Pläne gibt es?',
      [/zwei Pläne/, /Basic mit 100 Anfragen/, /Premium mit 2500 Anfragen/],
    ],
    [
      'en',
      'How many requests do I get on the premium plan?',
      [/Premium plan gives you 2500/, /Basic with 100/],
    ],
    ['de', 'Wie viele Anfragen hat Basic?', [/Plan Basic hast du 100 Anfragen/]],
    ['en', 'When does the counter reset?', [/Europe\/Berlin/]],
    ['en', 'How long are sessions kept?', [/7 days/]],
    ['de', 'Wie lange werden Sessions gespeichert?', [/7 Tage/]],
    ['en', 'How many turns does a session remember?', [/last 10 turns/]],
    ['en', 'How long can a message be?', [/2000 characters/]],
    ['de', 'Gibt es ein Limit pro Minute?', [/Premium 60/]],
  ] as const)('%s: %s', async (language, message, facts) => {
    const reply = await ask(language, message);
    for (const fact of facts) expect(reply).toMatch(fact);
    // The documented defaults may be named as such: "(PLAUDER_SESSION_TTL, 30 days by default)".
    const withoutDefaults = reply.replace(/\(PLAUDER_[A-Z_]+, [^)]*\)/g, '');
    expect(withoutDefaults).not.toMatch(/\b(1000|5000|4000|30 days|30 Tage)\b/);
  });

  it('follows up on a configured plan and never names a plan that does not exist', async () => {
    const first = 'How many requests does the basic plan have?';
    const reply = await ask('en', first);
    expect(reply).toMatch(/Basic plan gives you 100/);
    const followUp = await ask('en', 'and premium?', [{ message: first, reply, language: 'en' }]);
    expect(followUp).toMatch(/Premium plan gives you 2500/);
    expect(await ask('en', 'How many requests does the plus plan have?')).not.toMatch(/5000/);
  });

  it('says there is no per-minute limit when no plan has one', async () => {
    const reply = await createBuiltinCore().reply({
      language: 'en',
      message: 'Is there a per-minute limit?',
      history: [],
      signal,
    });
    expect(reply).toMatch(/no per-minute limit/);
  });

  it('names the per-minute limits of the running configuration', async () => {
    const env = { PLAUDER_PLANS: 'standard=1000/month+60/minute,plus=5000/month+300/minute' };
    const config = loadConfig({ PLAUDER_DATABASE_URL: 'sqlite::memory:', ...env });
    if (config.core.kind !== 'builtin') throw new Error('expected the built-in core');
    const core = createBuiltinCore(config.core.options);
    const reply = await core.reply({
      language: 'en',
      message: 'Is there a per-minute limit?',
      history: [],
      signal,
    });
    expect(reply).toMatch(/Standard 60/);
    expect(reply).toMatch(/Plus 300/);
  });

  it.each([
    {},
    {
      PLAUDER_PLANS: 'basic=100,premium=2500/month+30/minute,enterprise=90000',
      PLAUDER_QUOTA_TIMEZONE: 'Europe/Berlin',
      PLAUDER_SESSION_TTL: '36h',
      PLAUDER_SESSION_WINDOW: '5',
      PLAUDER_MESSAGE_MAX_CHARS: '900',
    },
  ])('reads the same values as the configuration: %o', (env) => {
    const config = loadConfig({ PLAUDER_DATABASE_URL: 'sqlite::memory:', ...env });
    const facts = readServiceFacts(env);
    expect(facts.plans.map(({ name, monthly, perMinute }) => [name, monthly, perMinute])).toEqual(
      [...config.plans].map(([name, plan]) => [name, plan.monthly, plan.perMinute]),
    );
    expect(facts.quotaTimeZone).toBe(config.quotaTimeZone);
    expect(facts.sessionTtlMs).toBe(config.sessionTtlMs);
    expect(facts.sessionWindow).toBe(config.sessionWindow);
    expect(facts.messageMaxChars).toBe(config.messageMaxChars);
    expect(facts.idempotencyTtlMs).toBe(config.idempotencyTtlMs);
    // The per-key concurrency limit, where the configuration has it, is read alike.
    const concurrency = (config as { keyConcurrency?: number }).keyConcurrency;
    if (concurrency !== undefined) expect(facts.keyConcurrency).toBe(concurrency);
    expect(config.core).toEqual({ kind: 'builtin', options: expect.objectContaining({ facts }) });
  });
});

describe('the shipped knowledge base agrees with the documentation', () => {
  const index = loadKnowledgeIndex(
    fileURLToPath(new URL('../../../knowledge/plauder.kb', import.meta.url)),
  );
  const answers = index.entries.flatMap((entry) =>
    (['de', 'en'] as const).flatMap((language) =>
      entry.planBound
        ? index.facts.plans.map((plan) => entry.answer(language, plan))
        : [entry.answer(language)],
    ),
  );
  const english = (id: string) =>
    index.entries.find((entry) => entry.entry.id === id)?.answer('en') ?? '';
  const all = answers.join('\n');
  const readmeDefault = (variable: string) =>
    new RegExp(`^\\| \`${variable}\` \\| \`([^\`]+)\``, 'm').exec(README)?.[1];

  it('names only CLI commands the README documents', () => {
    const commands = new Set(
      [...all.matchAll(/plauder (keys [a-z-]+|usage|serve|kb check|ask)/g)].map(
        (m) => m[1] as string,
      ),
    );
    expect(commands.size).toBeGreaterThan(5);
    for (const command of commands) expect(CLI, command).toContain(command);
  });

  it('names only variables, routes and error codes the README documents', () => {
    const names = new Set(
      [
        ...all.matchAll(/PLAUDER_[A-Z_]+/g),
        ...all.matchAll(
          /(?<![\w/])\/(api|admin|healthz|readyz|metrics|openapi\.json|docs)[\w/{}.-]*/g,
        ),
        ...all.matchAll(/\b[a-z]+_[a-z_]+\b/g),
      ].map((m) => m[0].replace(/[.)]$/, '')),
    );
    expect(names.size).toBeGreaterThan(20);
    for (const name of names) {
      if (name.startsWith('/api/sessions/')) expect(README).toContain('/api/sessions/{sessionId}');
      else if (!DOCUMENTED_WITH_THEIR_FEATURE.has(name)) expect(README, name).toContain(name);
    }
  });

  it('gives the defaults the README gives', () => {
    const documented = readServiceFacts({
      PLAUDER_PLANS: readmeDefault('PLAUDER_PLANS'),
      PLAUDER_QUOTA_TIMEZONE: readmeDefault('PLAUDER_QUOTA_TIMEZONE'),
      PLAUDER_SESSION_TTL: readmeDefault('PLAUDER_SESSION_TTL'),
      PLAUDER_SESSION_WINDOW: readmeDefault('PLAUDER_SESSION_WINDOW'),
      PLAUDER_MESSAGE_MAX_CHARS: readmeDefault('PLAUDER_MESSAGE_MAX_CHARS'),
    });
    expect(readmeDefault('PLAUDER_PLANS')).toBeDefined();
    expect(documented).toEqual(index.facts);
    expect(README).toMatch(/`standard` 1000, `plus` 5000/);
    expect(english('plans')).toMatch(/Standard with 1000 requests per month and Plus with 5000/);
  });

  it('says a revocation holds at once, as the README does', () => {
    expect(README).toMatch(/Revocation is immediate/);
    expect(english('key-revoke')).toMatch(/at once/);
    expect(all).not.toMatch(/within a second|spätestens nach einer Sekunde/);
  });

  it('installs with npm ci, as the README does', () => {
    expect(README).toMatch(/^npm ci\s.*\n^npm start\s/m);
    expect(english('self-hosting')).toMatch(/npm ci/);
    expect(all).not.toMatch(/npm install/);
  });

  it('knows the web console the README describes', () => {
    expect(README).toMatch(/web\s+console at `\/admin\/`/);
    expect(english('admin')).toMatch(/web console at \/admin\//);
  });

  it('knows that a plan can be changed after the key was created', () => {
    expect(CLI).toMatch(/plauder keys set-plan ID PLAN/);
    for (const answer of answers) {
      if (/(when creating|beim Erstellen)/.test(answer)) expect(answer).toMatch(/keys set-plan/);
    }
    expect(english('change-plan')).toMatch(/keys set-plan ID PLAN/);
  });

  it('describes keys as the README does', () => {
    expect(README).toMatch(/46 characters/);
    expect(english('key-format')).toMatch(/46 characters long: the prefix plauder_/);
  });

  it('gives the message limit the README gives', () => {
    expect(README).toMatch(/longer than 4000 characters/);
    expect(english('message-length')).toMatch(/at most 4000 characters/);
  });
});

describe('reloading the knowledge base', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plauder-reload-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const entry = (answer: string) =>
    `[weather]\ntopic-de: Wetter\ntopic-en: weather\nkeywords: wetter, weather\nde: ${answer}\nen: ${answer}\n`;

  it('replaces the file on reload, and keeps it when the new one is broken', async () => {
    const file = join(dir, 'reload.kb');
    writeFileSync(file, entry('It rains.'));
    const core = createBuiltinCore({ knowledgePath: file });
    const ask = () =>
      core.reply({ language: 'en', message: 'How is the weather?', history: [], signal });
    expect(await ask()).toBe('It rains.');
    writeFileSync(file, entry('The sun shines.'));
    expect(core.reload()).toEqual({ ok: true, path: file, entries: 1 });
    expect(await ask()).toBe('The sun shines.');
    writeFileSync(file, `${entry('Snow.')}colour: blue\n[Bad Id]\n`);
    const result = core.reload();
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toBeInstanceOf(KnowledgeBaseError);
      const lines = result.error.problems.map((problem) => `${problem.line}: ${problem.detail}`);
      expect(lines).toContain(
        '7: unknown field "colour:" in entry [weather] (known: topic-de, topic-en, example, keywords, requires, de, en)',
      );
      expect(lines).toContain('8: entry id "Bad Id" must be lower-case letters, digits and "-"');
      expect(lines).toContain('8: entry [Bad Id] has no "topic-de:"');
    }
    expect(await ask()).toBe('The sun shines.');
  });

  it('reloads by itself when the file changes', async () => {
    const file = join(dir, 'watched.kb');
    writeFileSync(file, entry('It rains.'));
    const core = createBuiltinCore({ knowledgePath: file });
    const reloaded = new Promise<ReloadResult>((resolve) => core.watch(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 50));
    writeFileSync(file, entry('Fog, mostly.'));
    expect((await reloaded).ok).toBe(true);
    expect(await core.reply({ language: 'de', message: 'Wetter?', history: [], signal })).toBe(
      'Fog, mostly.',
    );
    await core.close?.();
  });
});
