/**
 * @module core/builtin/knowledge/knowledge-parser
 * Reads and parses a knowledge-base file (format: `knowledge/README.md`). Every problem
 * is collected, not only the first, and thrown together as one `KnowledgeBaseError`
 * naming the file and each line.
 */
import { readFileSync } from 'node:fs';
import {
  type KnowledgeBase,
  KnowledgeBaseError,
  type KnowledgeEntry,
  type Located,
  ProblemList,
} from './knowledge-base.js';

const HEADER_FIELDS = [
  'name',
  'intro-de',
  'intro-en',
  'capabilities-de',
  'capabilities-en',
  'synonyms',
  'alternatives',
  'offer',
] as const;
const ENTRY_FIELDS = [
  'topic-de',
  'topic-en',
  'example',
  'keywords',
  'requires',
  'de',
  'en',
] as const;
/** Fields that may be repeated: lists, and one example question per line. */
const LIST_FIELDS = new Set([
  'synonyms',
  'alternatives',
  'offer',
  'keywords',
  'requires',
  'example',
]);
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

function splitSections(text: string, problems: ProblemList): RawSection[] {
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
      if (last === undefined) problems.add(line, 'indented line continues no field');
      else {
        last.lineStarts.push({ offset: last.value.length + 1, line });
        last.value = `${last.value} ${trimmed}`;
      }
      return;
    }
    const heading = SECTION.exec(trimmed);
    if (heading) {
      section = { id: (heading[1] ?? '').trim(), line, fields: [] };
      sections.push(section);
      return;
    }
    const field = FIELD.exec(trimmed);
    if (!field) {
      problems.add(line, `expected "field: value" or "[entry-id]", got "${clip(trimmed)}"`);
      return;
    }
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

function splitList(field: RawField, problems: ProblemList): Located[] {
  const items: Located[] = [];
  let offset = 0;
  for (const raw of field.value.split(',')) {
    const text = raw.trim();
    const line = lineAt(field, offset + raw.length - raw.trimStart().length);
    offset += raw.length + 1;
    if (text !== '') items.push({ text, line });
    else if (offset <= field.value.length) {
      problems.add(line, `empty item in "${field.name}:" (two commas in a row?)`);
    }
  }
  return items;
}

/** Checks field names, duplicates and empty values; returns the usable fields by name. */
function checkFields(
  section: RawSection,
  allowed: readonly string[],
  problems: ProblemList,
): Map<string, RawField[]> {
  const where = section.id === undefined ? 'before the first [entry]' : `in entry [${section.id}]`;
  const byName = new Map<string, RawField[]>();
  for (const field of section.fields) {
    if (!allowed.includes(field.name)) {
      const hint = section.id === undefined ? ENTRY_FIELDS : HEADER_FIELDS;
      const misplaced = (hint as readonly string[]).includes(field.name);
      problems.add(
        field.line,
        misplaced
          ? `"${field.name}:" is not allowed ${where}`
          : `unknown field "${field.name}:" ${where} (known: ${allowed.join(', ')})`,
      );
      continue;
    }
    if (field.value === '') {
      problems.add(field.line, `"${field.name}:" has no value`);
      continue;
    }
    const seen = byName.get(field.name) ?? [];
    const first = seen[0];
    if (first !== undefined && !LIST_FIELDS.has(field.name)) {
      problems.add(field.line, `duplicate "${field.name}:" ${where} (first on line ${first.line})`);
      continue;
    }
    byName.set(field.name, [...seen, field]);
  }
  return byName;
}

function located(fields: Map<string, RawField[]>, name: string): Located | undefined {
  const field = fields.get(name)?.[0];
  return field === undefined ? undefined : { text: field.value, line: field.line };
}

function parseEntry(
  section: RawSection,
  problems: ProblemList,
  seen: Map<string, number>,
): KnowledgeEntry {
  const id = section.id ?? '';
  let usable = true;
  if (!ENTRY_ID.test(id)) {
    problems.add(section.line, `entry id "${id}" must be lower-case letters, digits and "-"`);
    usable = false;
  }
  const first = seen.get(id);
  if (first !== undefined) {
    problems.add(section.line, `duplicate entry [${id}] (first on line ${first})`);
    usable = false;
  } else seen.set(id, section.line);
  const fields = checkFields(section, ENTRY_FIELDS, problems);
  const keywords = (fields.get('keywords') ?? []).flatMap((field) => splitList(field, problems));
  const written = new Set(section.fields.map((field) => field.name));
  const required = (name: string): Located | undefined => {
    const value = located(fields, name);
    // A field written without a value was reported already.
    if (value === undefined && !written.has(name)) {
      problems.add(section.line, `entry [${id}] has no "${name}:"`);
    }
    return value;
  };
  const topicDe = required('topic-de');
  const topicEn = required('topic-en');
  const examples = (fields.get('example') ?? []).map(
    (field): Located => ({ text: field.value, line: field.line }),
  );
  if (keywords.length === 0 && examples.length === 0 && !written.has('keywords')) {
    problems.add(section.line, `entry [${id}] has neither "example:" nor "keywords:"`);
  }
  const de = required('de');
  const en = required('en');
  // An incomplete entry is still checked further (its keywords, its answers' placeholders),
  // so one run reports everything; the file is refused anyway.
  const missing: Located = { text: '', line: section.line };
  return {
    id: usable ? id : `line-${section.line}`,
    line: section.line,
    topic: { de: topicDe?.text ?? '', en: topicEn?.text ?? '' },
    answer: { de: de ?? missing, en: en ?? missing },
    keywords,
    examples,
    requires: (fields.get('requires') ?? []).map((field) => splitList(field, problems)),
  };
}

function parseHeader(section: RawSection, problems: ProblemList) {
  const fields = checkFields(section, HEADER_FIELDS, problems);
  const pair = (name: string) => {
    const de = located(fields, `${name}-de`);
    const en = located(fields, `${name}-en`);
    if ((de === undefined) !== (en === undefined)) {
      problems.add((de ?? en)?.line ?? 1, `give both "${name}-de:" and "${name}-en:", or neither`);
    }
    return de !== undefined && en !== undefined ? { de: de.text, en: en.text } : undefined;
  };
  const groups = (name: string) =>
    (fields.get(name) ?? []).flatMap((field) => {
      const group = splitList(field, problems);
      if (group.length >= 2) return [group];
      problems.add(field.line, `"${name}:" needs at least two words`);
      return [];
    });
  return {
    name: located(fields, 'name')?.text ?? 'plauder',
    intro: pair('intro'),
    capabilities: pair('capabilities'),
    synonyms: groups('synonyms'),
    alternatives: groups('alternatives'),
    offer: (fields.get('offer') ?? []).flatMap((field) => splitList(field, problems)),
  };
}

/**
 * Parses the text of a knowledge-base file; `source` names the file in error messages.
 * Problems of the structure are collected in `problems` (the caller throws them, after
 * the index has added its own).
 */
export function parseKnowledgeBase(
  text: string,
  source: string,
  problems = new ProblemList(source),
): KnowledgeBase {
  const [header, ...sections] = splitSections(text, problems);
  if (header === undefined || sections.length === 0) {
    problems.add(0, 'contains no entries (an entry starts with a line "[entry-id]")');
  }
  const seen = new Map<string, number>();
  const entries = sections.map((section) => parseEntry(section, problems, seen));
  const head = parseHeader(header ?? { id: undefined, line: 1, fields: [] }, problems);
  for (const offered of head.offer) {
    if (!seen.has(offered.text)) {
      problems.add(offered.line, `"offer:" names unknown entry [${offered.text}]`);
    }
  }
  return { source, ...head, entries };
}

/** Reads a knowledge-base file as UTF-8 text; unreadable files throw at once. */
export function readKnowledgeFile(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
    throw new KnowledgeBaseError(path, [
      { line: 0, detail: `cannot read the knowledge base (${code})` },
    ]);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    const lossy = bytes.toString('utf8');
    const line = lossy.slice(0, lossy.indexOf('\uFFFD')).split('\n').length;
    throw new KnowledgeBaseError(path, [
      { line, detail: 'is not valid UTF-8 (save the file as UTF-8)' },
    ]);
  }
}
