/**
 * @module core/builtin/knowledge/knowledge-parser
 * Reads and parses a knowledge-base file (format: `knowledge/README.md`). Problems are
 * thrown as `KnowledgeBaseError` naming the file and the line.
 */
import { readFileSync } from 'node:fs';
import {
  type KnowledgeBase,
  KnowledgeBaseError,
  type KnowledgeEntry,
  type Located,
} from './knowledge-base.js';

const HEADER_FIELDS = [
  'name',
  'intro-de',
  'intro-en',
  'synonyms',
  'alternatives',
  'offer',
] as const;
const ENTRY_FIELDS = ['topic-de', 'topic-en', 'keywords', 'requires', 'de', 'en'] as const;
const LIST_FIELDS = new Set(['synonyms', 'alternatives', 'offer', 'keywords', 'requires']);
const SECTION = /^\[([^\]]*)\]\s*$/;
const FIELD = /^([A-Za-z][A-Za-z-]*)\s*:(.*)$/;
const ENTRY_ID = /^[a-z0-9][a-z0-9-]*$/;
const LINE_BREAK = /\r?\n/;
const INDENTED = /^\s/;

/** One `field: value` with its continuation lines joined. */
interface RawField {
  readonly name: string;
  readonly line: number;
  value: string;
  /** Where each continuation line starts in `value`, so list items keep their own line. */
  readonly lineStarts: Array<{ readonly offset: number; readonly line: number }>;
}

interface RawSection {
  readonly id: string | undefined;
  readonly line: number;
  readonly fields: RawField[];
}

function splitSections(text: string, source: string): RawSection[] {
  const header: RawSection = { id: undefined, line: 1, fields: [] };
  const sections: RawSection[] = [header];
  let section = header;
  const lines = (text.startsWith('\uFEFF') ? text.slice(1) : text).split(LINE_BREAK);
  lines.forEach((raw, index) => {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const last = section.fields.at(-1);
    if (INDENTED.test(raw)) {
      if (last === undefined)
        throw new KnowledgeBaseError(source, line, 'indented line continues no field');
      last.lineStarts.push({ offset: last.value.length + 1, line });
      last.value = `${last.value} ${trimmed}`;
      return;
    }
    const heading = SECTION.exec(trimmed);
    if (heading) {
      section = { id: (heading[1] ?? '').trim(), line, fields: [] };
      sections.push(section);
      return;
    }
    const field = FIELD.exec(trimmed);
    if (!field)
      throw new KnowledgeBaseError(
        source,
        line,
        `expected "field: value" or "[entry-id]", got "${clip(trimmed)}"`,
      );
    const value = (field[2] ?? '').trim();
    section.fields.push({ name: (field[1] ?? '').toLowerCase(), line, value, lineStarts: [] });
  });
  return sections;
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

function lineAt(field: RawField, offset: number): number {
  let line = field.line;
  for (const start of field.lineStarts) if (start.offset <= offset) line = start.line;
  return line;
}

function splitList(field: RawField, source: string): Located[] {
  const items: Located[] = [];
  let offset = 0;
  for (const raw of field.value.split(',')) {
    const text = raw.trim();
    const line = lineAt(field, offset + raw.length - raw.trimStart().length);
    offset += raw.length + 1;
    if (text !== '') items.push({ text, line });
    else if (offset <= field.value.length) {
      throw new KnowledgeBaseError(
        source,
        line,
        `empty item in "${field.name}:" (two commas in a row?)`,
      );
    }
  }
  return items;
}

/** Checks field names, duplicates and empty values; returns the fields by name. */
function checkFields(
  section: RawSection,
  allowed: readonly string[],
  source: string,
): Map<string, RawField[]> {
  const where = section.id === undefined ? 'before the first [entry]' : `in entry [${section.id}]`;
  const byName = new Map<string, RawField[]>();
  for (const field of section.fields) {
    if (!allowed.includes(field.name)) {
      const hint = section.id === undefined ? ENTRY_FIELDS : HEADER_FIELDS;
      const misplaced = (hint as readonly string[]).includes(field.name);
      const detail = misplaced
        ? `"${field.name}:" is not allowed ${where}`
        : `unknown field "${field.name}:" ${where} (known: ${allowed.join(', ')})`;
      throw new KnowledgeBaseError(source, field.line, detail);
    }
    if (field.value === '')
      throw new KnowledgeBaseError(source, field.line, `"${field.name}:" has no value`);
    const seen = byName.get(field.name) ?? [];
    const first = seen[0];
    if (first !== undefined && !LIST_FIELDS.has(field.name)) {
      throw new KnowledgeBaseError(
        source,
        field.line,
        `duplicate "${field.name}:" ${where} (first on line ${first.line})`,
      );
    }
    byName.set(field.name, [...seen, field]);
  }
  return byName;
}

function single(fields: Map<string, RawField[]>, name: string): string | undefined {
  return fields.get(name)?.[0]?.value;
}

function required(
  fields: Map<string, RawField[]>,
  name: string,
  section: RawSection,
  source: string,
): string {
  const value = single(fields, name);
  if (value === undefined)
    throw new KnowledgeBaseError(source, section.line, `entry [${section.id}] has no "${name}:"`);
  return value;
}

function parseEntry(
  section: RawSection,
  source: string,
  seen: Map<string, number>,
): KnowledgeEntry {
  const id = section.id ?? '';
  if (!ENTRY_ID.test(id)) {
    throw new KnowledgeBaseError(
      source,
      section.line,
      `entry id "${id}" must be lower-case letters, digits and "-"`,
    );
  }
  const first = seen.get(id);
  if (first !== undefined)
    throw new KnowledgeBaseError(
      source,
      section.line,
      `duplicate entry [${id}] (first on line ${first})`,
    );
  seen.set(id, section.line);
  const fields = checkFields(section, ENTRY_FIELDS, source);
  const keywords = (fields.get('keywords') ?? []).flatMap((field) => splitList(field, source));
  if (keywords.length === 0)
    throw new KnowledgeBaseError(source, section.line, `entry [${id}] has no "keywords:"`);
  return {
    id,
    line: section.line,
    topic: {
      de: required(fields, 'topic-de', section, source),
      en: required(fields, 'topic-en', section, source),
    },
    answer: {
      de: required(fields, 'de', section, source),
      en: required(fields, 'en', section, source),
    },
    keywords,
    requires: (fields.get('requires') ?? []).map((field) => splitList(field, source)),
  };
}

function parseHeader(section: RawSection, source: string) {
  const fields = checkFields(section, HEADER_FIELDS, source);
  const introDe = single(fields, 'intro-de');
  const introEn = single(fields, 'intro-en');
  if ((introDe === undefined) !== (introEn === undefined)) {
    const line = (fields.get('intro-de') ?? fields.get('intro-en'))?.[0]?.line ?? 1;
    throw new KnowledgeBaseError(source, line, 'give both "intro-de:" and "intro-en:", or neither');
  }
  const groups = (name: string) =>
    (fields.get(name) ?? []).map((field) => {
      const group = splitList(field, source);
      if (group.length < 2) {
        throw new KnowledgeBaseError(source, field.line, `"${name}:" needs at least two words`);
      }
      return group;
    });
  return {
    name: single(fields, 'name') ?? 'plauder',
    intro:
      introDe !== undefined && introEn !== undefined ? { de: introDe, en: introEn } : undefined,
    synonyms: groups('synonyms'),
    alternatives: groups('alternatives'),
    offer: (fields.get('offer') ?? []).flatMap((field) => splitList(field, source)),
  };
}

/** Parses the text of a knowledge-base file; `source` names the file in error messages. */
export function parseKnowledgeBase(text: string, source: string): KnowledgeBase {
  const [header, ...sections] = splitSections(text, source);
  if (header === undefined || sections.length === 0) {
    throw new KnowledgeBaseError(
      source,
      0,
      'contains no entries (an entry starts with a line "[entry-id]")',
    );
  }
  const seen = new Map<string, number>();
  const entries = sections.map((section) => parseEntry(section, source, seen));
  const head = parseHeader(header, source);
  for (const offered of head.offer) {
    if (!seen.has(offered.text)) {
      throw new KnowledgeBaseError(
        source,
        offered.line,
        `"offer:" names unknown entry [${offered.text}]`,
      );
    }
  }
  return { source, ...head, entries };
}

/** Reads and parses a knowledge-base file (UTF-8); `path` names the file in error messages. */
export function loadKnowledgeBase(path: string): KnowledgeBase {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new KnowledgeBaseError(path, 0, `cannot read the knowledge base (${code})`);
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const lossy = bytes.toString('utf8');
    const line = lossy.slice(0, lossy.indexOf('\uFFFD')).split('\n').length;
    throw new KnowledgeBaseError(path, line, 'is not valid UTF-8 (save the file as UTF-8)');
  }
  return parseKnowledgeBase(text, path);
}
