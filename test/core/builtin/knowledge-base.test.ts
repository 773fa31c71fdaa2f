import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  createBuiltinCore,
  KnowledgeBaseError,
} from '../../../src/core/builtin/create-builtin-core.js';

const dir = mkdtempSync(join(tmpdir(), 'plauder-kb-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ENTRY = `[weather]
topic-de: Wetter
topic-en: weather
keywords: wetter
de: Es regnet.
en: It rains.
`;

let counter = 0;
function write(content: string | Buffer): string {
  counter += 1;
  const path = join(dir, `kb-${counter}.kb`);
  writeFileSync(path, content);
  return path;
}

function loadError(content: string | Buffer): KnowledgeBaseError {
  const path = write(content);
  try {
    createBuiltinCore({ knowledgePath: path });
  } catch (error) {
    if (error instanceof KnowledgeBaseError) return error;
    throw error;
  }
  throw new Error(`expected a KnowledgeBaseError for ${path}`);
}

// Each case: file content, the line the error must name, and a part of its message.
const BROKEN: ReadonlyArray<readonly [string, string, number, string]> = [
  ['a file without entries', '# only a comment\nname: x\n', 0, 'contains no entries'],
  [
    'a line that is neither field nor entry',
    `${ENTRY}just some text\n`,
    7,
    'expected "field: value"',
  ],
  ['an unknown field', `${ENTRY}colour: blue\n`, 7, 'unknown field "colour:"'],
  [
    'a header field inside an entry',
    `${ENTRY}synonyms: a, b\n`,
    7,
    '"synonyms:" is not allowed in entry [weather]',
  ],
  [
    'an entry field before the first entry',
    `de: Hallo\n${ENTRY}`,
    1,
    '"de:" is not allowed before the first [entry]',
  ],
  ['a duplicate entry id', `${ENTRY}${ENTRY}`, 7, 'duplicate entry [weather] (first on line 1)'],
  [
    'an invalid entry id',
    `[Hello World]\n${ENTRY.split('\n').slice(1).join('\n')}`,
    1,
    'entry id "Hello World"',
  ],
  ['a missing answer', ENTRY.replace('en: It rains.\n', ''), 1, 'entry [weather] has no "en:"'],
  [
    'a missing topic',
    ENTRY.replace('topic-de: Wetter\n', ''),
    1,
    'entry [weather] has no "topic-de:"',
  ],
  [
    'neither examples nor keywords',
    ENTRY.replace('keywords: wetter\n', ''),
    1,
    'entry [weather] has neither "example:" nor "keywords:"',
  ],
  [
    'a duplicate answer',
    `${ENTRY}de: Nochmal.\n`,
    7,
    'duplicate "de:" in entry [weather] (first on line 5)',
  ],
  ['an empty value', ENTRY.replace('de: Es regnet.', 'de:'), 5, '"de:" has no value'],
  [
    'an empty list item',
    ENTRY.replace('keywords: wetter', 'keywords: wetter,, regen'),
    4,
    'empty item in "keywords:"',
  ],
  [
    'a keyword of stop words only, on a continuation line',
    ENTRY.replace('keywords: wetter', 'keywords: wetter,\n  und oder'),
    5,
    'keyword "und oder" has only stop words',
  ],
  [
    'a required word of stop words only',
    ENTRY.replace('keywords: wetter', 'keywords: wetter\nrequires: the'),
    5,
    'required word "the"',
  ],
  [
    'an offer naming an unknown entry',
    `offer: weather, nope\n${ENTRY}`,
    1,
    '"offer:" names unknown entry [nope]',
  ],
  [
    'a synonym group of one word',
    `synonyms: wetter\n${ENTRY}`,
    1,
    '"synonyms:" needs at least two words',
  ],
  [
    'an alternatives group of one word',
    `alternatives: wetter\n${ENTRY}`,
    1,
    '"alternatives:" needs at least two words',
  ],
  [
    'a synonym of two words',
    `synonyms: wetter, guten tag\n${ENTRY}`,
    1,
    'synonym "guten tag" must be a single word',
  ],
  [
    'an indented line before any field',
    `  continued\n${ENTRY}`,
    1,
    'indented line continues no field',
  ],
  [
    'intro in one language only',
    `intro-de: Ich bin x.\n${ENTRY}`,
    1,
    'give both "intro-de:" and "intro-en:"',
  ],
];

describe('knowledge base', () => {
  it.each(BROKEN)('rejects %s, naming the file and line', (_name, content, line, detail) => {
    const error = loadError(content);
    expect(error.message).toContain(detail);
    expect(error.line).toBe(line);
    const where = line > 0 ? `${error.source}:${line}: ` : `${error.source}: `;
    expect(error.message.startsWith(where)).toBe(true);
    expect(error.source.startsWith(dir)).toBe(true);
  });

  it('rejects a file that is not UTF-8, naming the line', () => {
    const bytes = Buffer.concat([
      Buffer.from(`${ENTRY}keywords: caf`),
      Buffer.from([0xe9]),
      Buffer.from('\n'),
    ]);
    const error = loadError(bytes);
    expect(error.message).toMatch(/:7: is not valid UTF-8/);
  });

  it('rejects a missing file with the path in the message', () => {
    const path = join(dir, 'does-not-exist.kb');
    expect(() => createBuiltinCore({ knowledgePath: path })).toThrow(
      `${path}: cannot read the knowledge base (ENOENT)`,
    );
  });

  it('accepts CRLF line ends, a byte-order mark, comments and continuation lines', async () => {
    const text = `\uFEFF# comment\r\nname: Bob\r\n${ENTRY.replace('de: Es regnet.', 'de: Es regnet\r\n  in Strömen.')}`;
    const core = createBuiltinCore({ knowledgePath: write(text.replaceAll('\n', '\r\n')) });
    const reply = await core.reply({
      language: 'de',
      message: 'Wie ist das Wetter?',
      history: [],
      signal: new AbortController().signal,
    });
    expect(reply).toBe('Es regnet in Strömen.');
  });

  it('rejects a confidence threshold outside (0, 1]', () => {
    const path = write(ENTRY);
    expect(() => createBuiltinCore({ knowledgePath: path, confidenceThreshold: 0 })).toThrow(
      RangeError,
    );
    expect(() => createBuiltinCore({ knowledgePath: path, confidenceThreshold: 1.5 })).toThrow(
      RangeError,
    );
  });
});
