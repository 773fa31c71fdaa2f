/**
 * @module core/builtin/knowledge/knowledge-index
 * Compiles a parsed knowledge base into what matching needs, once at start-up:
 * - every keyword, topic word and synonym becomes a word of the vocabulary;
 * - words that share a form (the word itself, its German stem, its English stem) or are
 *   listed as synonyms are one *concept*, so `Anfragen`, `Anfrage`, `requests` and `quota`
 *   can all mean the same thing;
 * - each concept gets an IDF weight (rare concepts say more about the topic) and a posting
 *   list of the entries that use it.
 */
import { stemEnglish } from '../text/english-stemmer.js';
import { stemGerman } from '../text/german-stemmer.js';
import { STOP_WORDS } from '../text/stop-words.js';
import { isNumber, tokenize } from '../text/tokenize.js';
import {
  type KnowledgeBase,
  KnowledgeBaseError,
  type KnowledgeEntry,
  type Located,
} from './knowledge-base.js';

export interface IndexedEntry {
  readonly entry: KnowledgeEntry;
  readonly position: number;
  readonly concepts: ReadonlySet<number>;
  /** Each group lists concepts of which at least one must occur in the question. */
  readonly requires: ReadonlyArray<readonly number[]>;
}

export interface KnowledgeIndex {
  readonly base: KnowledgeBase;
  readonly entries: readonly IndexedEntry[];
  /** Entries offered as topics when no answer is found. */
  readonly offer: readonly IndexedEntry[];
  readonly conceptCount: number;
  /** Per concept: ln(1 + N/df) / ln(1 + N), in (0, 1]. */
  readonly idf: Float64Array;
  /** Per concept: the positions of the entries that use it. */
  readonly postings: ReadonlyArray<readonly number[]>;
  /** Every form (word or stem) of the vocabulary → its concept. */
  readonly forms: ReadonlyMap<string, number>;
  /** Per concept named in `alternatives:`, the concepts it is an alternative to. */
  readonly alternatives: ReadonlyMap<number, ReadonlySet<number>>;
  /** Stop words plus the assistant's own name. */
  readonly ignored: ReadonlySet<string>;
}

/** The forms under which a word is found: itself and its stems in both languages. */
export function formsOf(word: string): string[] {
  if (isNumber(word)) return [word];
  const forms = [word, stemGerman(word), stemEnglish(word)];
  return forms.filter((form, i) => form.length > 0 && forms.indexOf(form) === i);
}

class UnionFind {
  private readonly parent = new Map<string, string>();
  find(x: string): string {
    let root = x;
    for (
      let up = this.parent.get(root);
      up !== undefined && up !== root;
      up = this.parent.get(root)
    ) {
      root = up;
    }
    if (!this.parent.has(x)) this.parent.set(x, x);
    this.parent.set(x, root);
    return root;
  }
  union(a: string, b: string): void {
    const ra = this.find(a);
    const rb = this.find(b);
    if (ra !== rb) this.parent.set(rb, ra);
  }
  keys(): IterableIterator<string> {
    return this.parent.keys();
  }
}

/** The words of a keyword or phrase that can match (stop words and the name removed). */
function wordsOf(
  item: Located,
  ignored: ReadonlySet<string>,
  source: string,
  what: string,
): string[] {
  const words = tokenize(item.text).filter((word) => !ignored.has(word));
  if (words.length === 0) {
    throw new KnowledgeBaseError(
      source,
      item.line,
      `${what} "${item.text}" has only stop words and can never match`,
    );
  }
  return words;
}

function singleWord(
  item: Located,
  ignored: ReadonlySet<string>,
  source: string,
  what: string,
): string {
  const words = wordsOf(item, ignored, source, what);
  if (words.length > 1)
    throw new KnowledgeBaseError(source, item.line, `${what} "${item.text}" must be a single word`);
  return words[0] as string;
}

interface EntryWords {
  readonly words: string[];
  readonly requires: string[][];
}

function collectWords(base: KnowledgeBase, ignored: ReadonlySet<string>): EntryWords[] {
  const { source } = base;
  return base.entries.map((entry) => {
    // A hyphenated or multi-word item ("retry-after") offers each of its words.
    const requires = entry.requires.map((group) =>
      group.flatMap((item) => wordsOf(item, ignored, source, 'required word')),
    );
    const keywords = entry.keywords.flatMap((item) => wordsOf(item, ignored, source, 'keyword'));
    const topicWords = [entry.topic.de, entry.topic.en].flatMap((topic) =>
      tokenize(topic).filter((word) => !ignored.has(word)),
    );
    return { words: [...keywords, ...topicWords, ...requires.flat()], requires };
  });
}

function buildConcepts(
  base: KnowledgeBase,
  entryWords: EntryWords[],
  ignored: ReadonlySet<string>,
) {
  const sets = new UnionFind();
  const addWord = (word: string) => {
    for (const form of formsOf(word)) sets.union(word, form);
  };
  for (const { words } of entryWords) words.forEach(addWord);
  for (const group of base.synonyms) {
    const words = group.map((item) => singleWord(item, ignored, base.source, 'synonym'));
    words.forEach(addWord);
    for (const word of words.slice(1)) sets.union(words[0] as string, word);
  }
  for (const group of base.alternatives) {
    for (const item of group) addWord(singleWord(item, ignored, base.source, 'alternative'));
  }
  const conceptOfRoot = new Map<string, number>();
  const forms = new Map<string, number>();
  for (const form of [...sets.keys()]) {
    const root = sets.find(form);
    let concept = conceptOfRoot.get(root);
    if (concept === undefined) {
      concept = conceptOfRoot.size;
      conceptOfRoot.set(root, concept);
    }
    forms.set(form, concept);
  }
  return { forms, conceptCount: conceptOfRoot.size };
}

function buildAlternatives(
  base: KnowledgeBase,
  ignored: ReadonlySet<string>,
  conceptOf: (word: string) => number,
): Map<number, Set<number>> {
  const alternatives = new Map<number, Set<number>>();
  for (const group of base.alternatives) {
    const concepts = group.map((item) =>
      conceptOf(singleWord(item, ignored, base.source, 'alternative')),
    );
    for (const concept of concepts) {
      const others = alternatives.get(concept) ?? new Set<number>();
      for (const other of concepts) if (other !== concept) others.add(other);
      alternatives.set(concept, others);
    }
  }
  return alternatives;
}

/** Builds the index; throws `KnowledgeBaseError` for keywords that can never match. */
export function buildKnowledgeIndex(base: KnowledgeBase): KnowledgeIndex {
  const ignored = new Set([...STOP_WORDS, ...tokenize(base.name)]);
  const entryWords = collectWords(base, ignored);
  const { forms, conceptCount } = buildConcepts(base, entryWords, ignored);
  const conceptOf = (word: string) => forms.get(word) as number;
  const postings: number[][] = Array.from({ length: conceptCount }, () => []);
  const conceptSets = entryWords.map(({ words }, position) => {
    const concepts = new Set(words.map(conceptOf));
    for (const concept of concepts) postings[concept]?.push(position);
    return concepts;
  });
  const n = base.entries.length;
  const idf = new Float64Array(conceptCount);
  postings.forEach((list, concept) => {
    idf[concept] = list.length === 0 ? 0 : Math.log(1 + n / list.length) / Math.log(1 + n);
  });
  const entries = base.entries.map((entry, position): IndexedEntry => {
    const concepts = conceptSets[position] ?? new Set<number>();
    const requires = (entryWords[position]?.requires ?? []).map((group) => group.map(conceptOf));
    return { entry, position, concepts, requires };
  });
  const byId = new Map(entries.map((indexed) => [indexed.entry.id, indexed]));
  const offer = base.offer.flatMap((item) => byId.get(item.text) ?? []);
  return {
    base,
    entries,
    offer,
    conceptCount,
    idf,
    postings,
    forms,
    alternatives: buildAlternatives(base, ignored, conceptOf),
    ignored,
  };
}
