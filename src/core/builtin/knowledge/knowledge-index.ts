/**
 * @module core/builtin/knowledge/knowledge-index
 * Compiles a parsed knowledge base into what matching needs, once per load:
 * - every keyword, topic word and synonym becomes a word of the vocabulary;
 * - words that share a form (the word itself, its German stem, its English stem) or are
 *   listed as synonyms are one *concept*, so `Anfragen`, `Anfrage`, `requests` and `quota`
 *   can all mean the same thing;
 * - each concept gets an IDF weight (rare concepts say more about the topic) and a posting
 *   list of the entries that use it;
 * - the configured plans are words too (`{plan}` in `keywords:` / `requires:` stands for
 *   all of them), and answers have their placeholders filled from the service's facts.
 * Problems (a keyword of stop words only, an unknown placeholder, ...) are collected in
 * the caller's `ProblemList`, so a check reports them together with the parser's.
 */
import type { Language } from '../../core-adapter.js';
import { DEFAULT_SERVICE_FACTS, type PlanFacts, type ServiceFacts } from '../service-facts.js';
import { englishBaseForm } from '../text/english-irregular.js';
import { stemEnglish, stemGerman } from '../text/stemmers.js';
import { QUESTION_WORDS, STOP_WORDS } from '../text/stop-words.js';
import { foldText, isNumber, tokenize } from '../text/tokenize.js';
import { withAttributeWords } from './answer-attributes.js';
import { isPlaceholder, needsPlan, placeholdersIn, renderAnswer } from './answer-template.js';
import type { KnowledgeBase, KnowledgeEntry, Located, ProblemList } from './knowledge-base.js';

export interface IndexedEntry {
  readonly entry: KnowledgeEntry;
  readonly position: number;
  readonly concepts: ReadonlySet<number>;
  /** Each group lists concepts of which at least one must occur in the question. */
  readonly requires: ReadonlyArray<readonly number[]>;
  /** Whether the answer names the plan of the question (`{plan}`, `{plan-limit}`). */
  readonly planBound: boolean;
  /** The concepts of each example question (stop words left out), for nearest-example matching. */
  readonly examples: ReadonlyArray<Int32Array>;
  /** The concepts of all its example questions. */
  readonly exampleConcepts: ReadonlySet<number>;
  /** The answer with the service's facts filled in; `plan` for plan-bound answers. */
  answer(language: Language, plan?: PlanFacts): string;
}

export interface KnowledgeIndex {
  readonly base: KnowledgeBase;
  readonly facts: ServiceFacts;
  readonly entries: readonly IndexedEntry[];
  /** Entries offered as topics when no answer is found. */
  readonly offer: readonly IndexedEntry[];
  readonly conceptCount: number;
  /** Per concept: ln(1 + N/df) / ln(1 + N), in (0, 1], df counting the entries whose keywords have it. */
  readonly idf: Float64Array;
  /** Per concept: the positions of the entries that use it. */
  readonly postings: ReadonlyArray<readonly number[]>;
  /** Every form (word or stem) of the vocabulary → its concept. */
  readonly forms: ReadonlyMap<string, number>;
  /** Per concept named in `alternatives:`, the concepts it is an alternative to. */
  readonly alternatives: ReadonlyMap<number, ReadonlySet<number>>;
  /** The concept of each configured plan's name → the plan. */
  readonly plans: ReadonlyMap<number, PlanFacts>;
  /** Stop words plus the assistant's own name. */
  readonly ignored: ReadonlySet<string>;
  /** The words of the answers: every form of an answer's word → its id. */
  readonly answerForms: ReadonlyMap<string, number>;
  /** Per answer word: the positions of the entries whose answer has it. */
  readonly answerPostings: ReadonlyArray<readonly number[]>;
}

const PLAN_ITEM = '{plan}';
/** German verb endings the stemmer leaves alone (as in `matching/term-resolver.ts`). */
const VERB_ENDINGS = ['est', 'et', 'st', 't'] as const;

/**
 * The forms under which a word is found: itself, its stems in both languages and, for an
 * irregular English verb form, its base form.
 */
export function formsOf(word: string): string[] {
  if (isNumber(word)) return [word];
  const forms = [word, stemGerman(word), stemEnglish(word), englishBaseForm(word) ?? ''];
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

interface Context {
  readonly ignored: ReadonlySet<string>;
  readonly planWords: readonly string[];
  readonly problems: ProblemList;
}

/** The words of a keyword or phrase that can match (stop words and the name removed). */
function wordsOf(item: Located, context: Context, what: string): string[] {
  if (item.text.trim() === PLAN_ITEM) return [...context.planWords];
  const words = tokenize(item.text).filter((word) => !context.ignored.has(word));
  if (words.length === 0) {
    context.problems.add(
      item.line,
      `${what} "${item.text}" has only stop words and can never match`,
    );
  }
  return words;
}

/** One word; a hyphenated one is taken written together (`wi-fi` → `wifi`). */
function singleWord(item: Located, context: Context, what: string): string | undefined {
  const joined = /^[\p{L}\p{N}]+(?:-[\p{L}\p{N}]+)+$/u.test(item.text.trim())
    ? { ...item, text: item.text.replaceAll('-', '') }
    : item;
  const words = wordsOf(joined, context, what);
  if (words.length > 1) {
    context.problems.add(item.line, `${what} "${item.text}" must be a single word`);
    return undefined;
  }
  return words[0];
}

interface EntryWords {
  readonly words: string[];
  readonly requires: string[][];
  /** The words of each example question. */
  readonly examples: string[][];
  /** The words of each keyword of several words ("shelf life", "paper jam"). */
  readonly phrases: string[][];
  /** The words that are a keyword, topic word or required word on their own. */
  readonly singles: string[];
}

function collectWords(base: KnowledgeBase, context: Context): EntryWords[] {
  return base.entries.map((entry) => {
    // A hyphenated or multi-word item ("retry-after") offers each of its words.
    const requires = entry.requires.map((group) =>
      group.flatMap((item) => wordsOf(item, context, 'required word')),
    );
    const keywordWords = entry.keywords.map((item) => wordsOf(item, context, 'keyword'));
    const keywords = keywordWords.flat();
    const topicWords = [entry.topic.de, entry.topic.en].flatMap((topic) =>
      tokenize(topic).filter((word) => !context.ignored.has(word)),
    );
    const examples = entry.examples.map((example) => {
      const words = tokenize(example.text).filter((word) => !context.ignored.has(word));
      if (words.length === 0) {
        context.problems.add(
          example.line,
          `example "${example.text}" has only stop words and can never match`,
        );
      }
      return words;
    });
    return {
      words: [...keywords, ...topicWords, ...requires.flat()],
      requires,
      examples,
      phrases: keywordWords.filter((words) => words.length > 1),
      singles: [
        ...keywordWords.filter((words) => words.length === 1).flat(),
        ...topicWords,
        ...requires.flat(),
      ],
    };
  });
}

function buildConcepts(base: KnowledgeBase, entryWords: EntryWords[], context: Context) {
  const sets = new UnionFind();
  const addWord = (word: string) => {
    for (const form of formsOf(word)) sets.union(word, form);
  };
  for (const { words } of entryWords) words.forEach(addWord);
  // Plan names stay words of their own: "plus" is not the same concept as "standard".
  for (const word of context.planWords) sets.find(word);
  for (const group of base.synonyms) {
    const words = group.flatMap((item) => singleWord(item, context, 'synonym') ?? []);
    words.forEach(addWord);
    const [first, ...others] = words;
    if (first !== undefined) for (const word of others) sets.union(first, word);
  }
  for (const group of base.alternatives) {
    for (const item of group) {
      const word = singleWord(item, context, 'alternative');
      if (word !== undefined) addWord(word);
    }
  }
  // The words of example questions join the concept of a form already known, and never
  // join two known concepts: an example must not change what the keywords mean.
  const known = new Set(sets.keys());
  for (const { examples } of entryWords) {
    for (const word of examples.flat()) {
      const forms = formsOf(word);
      // "kostet" → "kost": a German verb form the stemmer leaves alone.
      const verb = VERB_ENDINGS.map((ending) =>
        word.length - ending.length >= 4 && word.endsWith(ending)
          ? word.slice(0, -ending.length)
          : '',
      ).filter((stem) => stem !== '');
      const anchor = [...forms, ...verb.flatMap(formsOf)].find((form) => known.has(form));
      if (anchor === undefined) for (const form of forms) sets.union(word, form);
      else sets.union(anchor, word);
    }
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
  context: Context,
  conceptOf: (word: string) => number | undefined,
  plans: ReadonlyMap<number, PlanFacts>,
): Map<number, Set<number>> {
  const groups = base.alternatives.map((group) =>
    group.flatMap((item) => conceptOf(singleWord(item, context, 'alternative') ?? '') ?? []),
  );
  // The configured plans are alternatives to each other.
  groups.push([...plans.keys()]);
  const alternatives = new Map<number, Set<number>>();
  for (const concepts of groups) {
    for (const concept of concepts) {
      const others = alternatives.get(concept) ?? new Set<number>();
      for (const other of concepts) if (other !== concept) others.add(other);
      alternatives.set(concept, others);
    }
  }
  return alternatives;
}

function checkAnswers(base: KnowledgeBase, problems: ProblemList): void {
  for (const entry of base.entries) {
    for (const answer of [entry.answer.de, entry.answer.en]) {
      for (const name of placeholdersIn(answer.text)) {
        if (!isPlaceholder(name)) {
          problems.add(
            answer.line,
            `unknown placeholder {${name}} in entry [${entry.id}] (see knowledge/README.md)`,
          );
        }
      }
    }
    const bound = needsPlan(entry.answer.de.text) || needsPlan(entry.answer.en.text);
    const hasPlanRequirement = entry.requires.some((group) =>
      group.some((item) => item.text.trim() === PLAN_ITEM),
    );
    if (bound && !hasPlanRequirement) {
      problems.add(
        entry.line,
        `entry [${entry.id}] names {plan} in its answer and needs "requires: {plan}"`,
      );
    }
  }
}

/** Words that are ignored in questions: stop words (but not the question words the file uses) and the name. */
function ignoredWords(base: KnowledgeBase): Set<string> {
  // Only a question word written as a keyword of its own: "wann", not "wann genau".
  const used = new Set(
    base.entries.flatMap((entry) =>
      [...entry.keywords, ...entry.requires.flat()].map((item) => foldText(item.text.trim())),
    ),
  );
  const ignored = new Set([...STOP_WORDS, ...tokenize(base.name)]);
  for (const word of QUESTION_WORDS) if (used.has(word)) ignored.delete(word);
  return ignored;
}

/** Answer words shorter than this ("of", "in") say nothing about a topic. */
const MIN_ANSWER_WORD = 3;

/**
 * The words of the entries' answers in both languages (a plan-bound answer for every plan):
 * a question may name what an answer says rather than what its keywords list.
 */
function indexAnswers(answers: ReadonlyArray<readonly string[]>, ignored: ReadonlySet<string>) {
  const answerForms = new Map<string, number>();
  const answerPostings: number[][] = [];
  answers.forEach((texts, position) => {
    const words = new Set(
      withAttributeWords(
        texts.flatMap((text) => tokenize(text)),
        texts,
      ),
    );
    for (const word of words) {
      if (word.length < MIN_ANSWER_WORD || ignored.has(word)) continue;
      for (const form of formsOf(word)) {
        const id = answerForms.get(form);
        const list = id === undefined ? undefined : answerPostings[id];
        if (list === undefined) {
          answerForms.set(form, answerPostings.length);
          answerPostings.push([position]);
        } else if (list.at(-1) !== position) list.push(position);
      }
    }
  });
  return { answerForms, answerPostings };
}

/** Builds the index; problems go to `problems` (the caller throws them). */
export function buildKnowledgeIndex(
  base: KnowledgeBase,
  problems: ProblemList,
  facts: ServiceFacts = DEFAULT_SERVICE_FACTS,
): KnowledgeIndex {
  const ignored = ignoredWords(base);
  const planWords = facts.plans.map((plan) => foldText(plan.name).replace(/[^a-z0-9]/g, ''));
  const context: Context = { ignored, planWords, problems };
  const entryWords = collectWords(base, context);
  const { forms, conceptCount } = buildConcepts(base, entryWords, context);
  const conceptOf = (word: string) => forms.get(word);
  const postings: number[][] = Array.from({ length: conceptCount }, () => []);
  const conceptSets = entryWords.map(({ words }, position) => {
    const concepts = new Set(words.flatMap((word) => conceptOf(word) ?? []));
    for (const concept of concepts) postings[concept]?.push(position);
    return concepts;
  });
  const exampleSets = entryWords.map(
    ({ examples }) => new Set(examples.flat().flatMap((word) => conceptOf(word) ?? [])),
  );
  const n = base.entries.length;
  const weigh = (df: number) => (df === 0 ? 0 : Math.log(1 + n / df) / Math.log(1 + n));
  const idf = new Float64Array(conceptCount);
  postings.forEach((list, concept) => {
    idf[concept] = weigh(list.length);
  });
  checkAnswers(base, problems);
  const entries = base.entries.map((entry, position): IndexedEntry => {
    const concepts = conceptSets[position] ?? new Set<number>();
    const requires = (entryWords[position]?.requires ?? []).map((group) =>
      group.flatMap((word) => conceptOf(word) ?? []),
    );
    const planBound = needsPlan(entry.answer.de.text) || needsPlan(entry.answer.en.text);
    const examples = (entryWords[position]?.examples ?? []).map((words) =>
      Int32Array.from(new Set(words.flatMap((word) => conceptOf(word) ?? []))),
    );
    const fixed = {
      de: renderAnswer(entry.answer.de.text, facts, 'de'),
      en: renderAnswer(entry.answer.en.text, facts, 'en'),
    };
    return {
      entry,
      position,
      concepts,
      requires,
      planBound,
      examples,
      exampleConcepts: exampleSets[position] ?? new Set<number>(),
      answer: (language, plan) =>
        planBound && plan !== undefined
          ? renderAnswer(entry.answer[language].text, facts, language, plan)
          : fixed[language],
    };
  });
  const answers = entries.map((indexed) =>
    (['de', 'en'] as const).flatMap((language) =>
      indexed.planBound
        ? facts.plans.map((plan) => indexed.answer(language, plan))
        : [indexed.answer(language)],
    ),
  );
  const byId = new Map(entries.map((indexed) => [indexed.entry.id, indexed]));
  const offer = base.offer.flatMap((item) => byId.get(item.text) ?? []);
  const plans = new Map<number, PlanFacts>();
  facts.plans.forEach((plan, i) => {
    const word = planWords[i];
    const concept = word === undefined ? undefined : conceptOf(word);
    if (concept !== undefined) plans.set(concept, plan);
  });
  return {
    base,
    facts,
    entries,
    offer,
    conceptCount,
    idf,
    postings,
    forms,
    alternatives: buildAlternatives(base, context, conceptOf, plans),
    plans,
    ignored,
    ...indexAnswers(answers, ignored),
  };
}
