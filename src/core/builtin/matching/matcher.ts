/**
 * @module core/builtin/matching/matcher
 * Ranks knowledge entries against a query (a list of units, one per meaningful word) with
 * BM25F (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond",
 * 2009), as docs/core.md, "How the built-in core ranks", explains.
 *
 * An entry is a document of four fields: its keywords, its example questions, its topic
 * (both languages) and its answer (both languages, every plan). A unit is a term with
 * alternatives: its concepts (the word's stems, synonyms, compound parts or typo
 * corrections, found by the term resolver, which is the query expansion) and its answer
 * words. For a unit and an entry, the pseudo term frequency is
 *
 *   tf~ = Σ_field FIELD_WEIGHT[field] × tf(field) / (1 − B + B × len(field) / avglen(field))
 *
 * (for the concept fields the best of the unit's concepts, plus the answer field), and
 *
 *   score = Σ_unit weight × certainty × idf(unit) × tf~ / (K1 + tf~)
 *   idf   = ln(1 + (N − df + 0.5) / (df + 0.5)) / ln(1 + (N + 0.5) / 0.5)
 *
 * with df the entries where the unit's tf~ > 0 (normalised so that a word no entry has
 * weighs 1). The confidence is the score divided by what an entry matching every known word
 * fully (in its keywords and one example question) would score, where each word the
 * knowledge base does not know adds its `unknownWeight` (default `UNKNOWN_WEIGHT`, at most
 * `MAX_UNKNOWN` of them) to that ideal: a question about something else is mostly unknown
 * words, and a question told inside a long story is judged by what it asks.
 *
 * An entry whose `requires:` groups are not all met is not ranked. Ties go to the entry that
 * comes first in the file.
 */
import type { IndexedEntry, KnowledgeIndex } from '../knowledge/knowledge-index.js';

export interface QueryUnit {
  /** The unit's concepts; empty for a word the knowledge base does not know. */
  readonly concepts: readonly number[];
  /** 1 for words of the message itself, less for words carried over from earlier turns. */
  readonly weight: number;
  /** How sure the word is this concept: 1, less for a corrected typo. Scales the score only. */
  readonly certainty: number;
  /**
   * For a word the knowledge base does not know: how much it says that the question is about
   * something else (default `UNKNOWN_WEIGHT`; more for a real English word).
   */
  readonly unknownWeight?: number;
  /** The answer words the unit's word is one of (`KnowledgeIndex.answerForms`). */
  readonly answer?: readonly number[];
}

export interface Match {
  readonly entry: IndexedEntry;
  /** The BM25F score over the ideal score of the query, in [0, 1]. */
  readonly confidence: number;
  /** The same without the typos' lower certainty: how much of the question the entry explains. */
  readonly coverage: number;
  /** How many words of the question the entry contains. */
  readonly words: number;
  /** The normalised IDF of those words (rare words say more). */
  readonly evidence: number;
  /** The sort key (the confidence). */
  readonly rank: number;
}

/** BM25's term-frequency saturation (the usual value). */
const K1 = 1.2;
/** BM25's length normalisation (the usual value), the same for every field. */
const B = 0.75;
/** Field weights: the answer speaks of its topic in passing, the other fields name it. */
const FIELD_WEIGHT = { keywords: 1, examples: 1, topic: 1, answer: 0.2 } as const;
/** What a word the knowledge base does not know adds to the ideal score, by default. */
const UNKNOWN_WEIGHT = 0.5;
/** How many unknown words count at most (a question inside a long story). */
const MAX_UNKNOWN = 3;
/** A real English word the knowledge base does not know names another topic. */
export const UNKNOWN_WORD_WEIGHT = 1;

/** The least ideal score a question is judged against: one fairly rare word, fully matched. */
const MIN_EVIDENCE = 0.3;
/** The saturated frequency of a word in an entry's keywords and one example question. */
const FULL_TF = FIELD_WEIGHT.keywords + FIELD_WEIGHT.examples;
const FULL = FULL_TF / (K1 + FULL_TF);

export interface Matcher {
  /** All entries with a positive confidence, best first. */
  score(units: readonly QueryUnit[]): Match[];
  /**
   * The concepts of each entry's example questions and of its topic as a question is read
   * (compounds, separable verbs, pairs of words), replacing the index's word-by-word reading.
   */
  useFields(
    examples: ReadonlyArray<ReadonlyArray<Int32Array>>,
    topics: ReadonlyArray<Int32Array>,
  ): void;
}

/** Per term: the entries that have it and its weighted, length-normalised frequency there. */
interface Postings {
  readonly positions: number[];
  readonly tf: number[];
  /** The part of `tf` from fields other than the keywords. */
  readonly rest: number[];
}

const normaliser = (lengths: readonly number[]) => {
  const average = lengths.reduce((sum, length) => sum + length, 0) / (lengths.length || 1) || 1;
  return lengths.map((length) => 1 - B + (B * length) / average);
};

/** Adds `tf` for `position` to the postings of `term`, summing with an earlier field's. */
function post(table: Postings[], term: number, position: number, tf: number, rest: number): void {
  let list = table[term];
  if (list === undefined) {
    list = { positions: [], tf: [], rest: [] };
    table[term] = list;
  }
  list.positions.push(position);
  list.tf.push(tf);
  list.rest.push(rest);
}

export function createMatcher(index: KnowledgeIndex): Matcher {
  const n = index.entries.length;
  const maxIdf = Math.log(1 + (n + 0.5) / 0.5);
  const answerLengths = new Array<number>(n).fill(0);
  index.answerPostings.forEach((positions) => {
    for (const position of positions) answerLengths[position] = (answerLengths[position] ?? 0) + 1;
  });
  const answerNorm = normaliser(answerLengths);

  // The documents: each example question of an entry with the entry's other fields (an
  // entry without examples is one document). An entry ranks by its best document.
  let docEntry = new Int32Array(0);
  let conceptPostings: Postings[] = [];
  let answerPostings: Postings[] = [];
  const useFields = (
    examples: ReadonlyArray<ReadonlyArray<Int32Array>>,
    topics: ReadonlyArray<Int32Array>,
  ) => {
    const docs: { entry: number; example: Int32Array }[] = [];
    for (const entry of index.entries) {
      const own = examples[entry.position] ?? [];
      if (own.length === 0) docs.push({ entry: entry.position, example: new Int32Array(0) });
      for (const example of own) docs.push({ entry: entry.position, example });
    }
    docEntry = Int32Array.from(docs, (doc) => doc.entry);
    const keywordNorm = normaliser(index.entries.map((entry) => entry.concepts.size));
    const exampleNorm = normaliser(docs.map((doc) => doc.example.length));
    const topicNorm = normaliser(index.entries.map((_, i) => topics[i]?.length ?? 0));
    conceptPostings = [];
    answerPostings = [];
    docs.forEach((doc, d) => {
      const at = doc.entry;
      const entry = index.entries[at] as IndexedEntry;
      const rest = new Map<number, number>();
      const add = (concept: number, value: number) =>
        rest.set(concept, (rest.get(concept) ?? 0) + value);
      for (const concept of new Set(doc.example)) {
        add(concept, FIELD_WEIGHT.examples / (exampleNorm[d] ?? 1));
      }
      for (const concept of new Set(topics[at] ?? [])) {
        add(concept, FIELD_WEIGHT.topic / (topicNorm[at] ?? 1));
      }
      const keyword = FIELD_WEIGHT.keywords / (keywordNorm[at] ?? 1);
      for (const concept of new Set([...entry.concepts, ...rest.keys()])) {
        const r = rest.get(concept) ?? 0;
        post(conceptPostings, concept, d, r + (entry.concepts.has(concept) ? keyword : 0), r);
      }
    });
    index.answerPostings.forEach((positions, word) => {
      let d = 0;
      for (const position of positions) {
        const tf = FIELD_WEIGHT.answer / (answerNorm[position] ?? 1);
        while (d < docs.length && (docEntry[d] ?? 0) < position) d += 1;
        for (; d < docs.length && docEntry[d] === position; d++) {
          post(answerPostings, word, d, tf, tf);
        }
      }
    });
    const m = docs.length;
    unitTf = new Float64Array(m);
    unitRest = new Float64Array(m);
    answerTf = new Float64Array(m);
    seen = new Int32Array(m);
    score = new Float64Array(m);
    loose = new Float64Array(m);
    explained = new Float64Array(m);
    evidence = new Float64Array(m);
    words = new Int32Array(m);
  };

  // Scratch arrays reused by every query (per document, sized by `useFields`).
  let unitTf = new Float64Array(0);
  let unitRest = new Float64Array(0);
  let answerTf = new Float64Array(0);
  let seen = new Int32Array(0);
  let score = new Float64Array(0);
  let loose = new Float64Array(0);
  let explained = new Float64Array(0);
  let evidence = new Float64Array(0);
  let words = new Int32Array(0);
  const entrySeen = new Int32Array(n);
  const answerSeen = new Int32Array(n);
  const present = new Int32Array(index.conceptCount);
  const touched: number[] = [];
  let stamp = 0;
  let queryMark = 0;
  let ideal = 0;
  useFields(
    index.entries.map((entry) => entry.examples),
    index.entries.map(() => new Int32Array(0)),
  );

  /** Every group of the entry's required concepts has one in the query. */
  const requiresMet = (entry: IndexedEntry) => {
    for (const group of entry.requires) {
      let met = false;
      for (const concept of group) {
        if (present[concept] === queryMark) {
          met = true;
          break;
        }
      }
      if (!met) return false;
    }
    return true;
  };

  /**
   * Adds one unit's BM25F term score to every document that has it (and to `loose`, the
   * score without the keywords field); false when no entry has it.
   */
  const addUnit = (unit: QueryUnit): boolean => {
    stamp += 1;
    touched.length = 0;
    let df = 0;
    let answerDf = 0;
    const visit = (list: Postings | undefined, answer: boolean) => {
      if (list === undefined) return;
      for (let i = 0; i < list.positions.length; i++) {
        const d = list.positions[i] as number;
        const tf = list.tf[i] as number;
        const rest = list.rest[i] as number;
        if (seen[d] !== stamp) {
          seen[d] = stamp;
          unitTf[d] = 0;
          unitRest[d] = 0;
          answerTf[d] = 0;
          touched.push(d);
        }
        const entry = docEntry[d] as number;
        const counted = answer ? answerSeen : entrySeen;
        if (counted[entry] !== stamp) {
          counted[entry] = stamp;
          if (answer) answerDf += 1;
          else df += 1;
        }
        if (answer) answerTf[d] = Math.max(answerTf[d] ?? 0, tf);
        else {
          unitTf[d] = Math.max(unitTf[d] ?? 0, tf);
          unitRest[d] = Math.max(unitRest[d] ?? 0, rest);
        }
      }
    };
    // The best of the unit's concepts (alternatives of one word), plus its answer words.
    for (const concept of unit.concepts) visit(conceptPostings[concept], false);
    for (const word of unit.answer ?? []) visit(answerPostings[word], true);
    // The entries that name the word as their topic say how rare it is; the answers, which
    // mention words in passing, only when no entry names it.
    if (df === 0) df = answerDf;
    if (df === 0) return false;
    const idf = (unit.weight * Math.log(1 + (n - df + 0.5) / (df + 0.5))) / maxIdf;
    let strongest = 0;
    for (const d of touched) {
      const answer = answerTf[d] ?? 0;
      const tf = (unitTf[d] ?? 0) + answer;
      strongest = Math.max(strongest, tf / (K1 + tf));
      const rest = (unitRest[d] ?? 0) + answer;
      const term = idf * (tf / (K1 + tf));
      score[d] = (score[d] ?? 0) + term * unit.certainty;
      loose[d] = (loose[d] ?? 0) + idf * (rest / (K1 + rest)) * unit.certainty;
      explained[d] = (explained[d] ?? 0) + term;
      evidence[d] = (evidence[d] ?? 0) + idf;
      words[d] = (words[d] ?? 0) + 1;
    }
    // The ideal entry has the word as strongly as the entry that has it most.
    ideal += idf * strongest;
    return true;
  };

  return {
    useFields,
    score(units) {
      queryMark += 1;
      score.fill(0);
      loose.fill(0);
      explained.fill(0);
      evidence.fill(0);
      words.fill(0);
      ideal = 0;
      let unknown = 0;
      for (const unit of units) {
        for (const concept of unit.concepts) present[concept] = queryMark;
      }
      for (const unit of units) {
        if (addUnit(unit)) continue;
        // A word no entry has: the question is partly about something else.
        const add = Math.min(
          unit.unknownWeight ?? UNKNOWN_WEIGHT,
          MAX_UNKNOWN * UNKNOWN_WEIGHT - unknown,
        );
        if (add > 0) {
          unknown += add;
          ideal += unit.weight * add * FULL;
        }
      }
      const best = new Map<number, Match>();
      if (ideal <= 0) return [];
      // A question of one common word ("keys?") is weak evidence however well it matches.
      ideal = Math.max(ideal, MIN_EVIDENCE);
      for (let d = 0; d < docEntry.length; d++) {
        if (!((score[d] ?? 0) > 0)) continue;
        const entry = index.entries[docEntry[d] as number] as IndexedEntry;
        // An unmet `requires:` leaves the entry its example questions, topic and answer, but
        // not its keywords (knowledge/README.md), unless the answer names the question's plan.
        const met = requiresMet(entry);
        if (!met && entry.planBound) continue;
        const s = met ? (score[d] ?? 0) : (loose[d] ?? 0);
        if (s <= 0) continue;
        const confidence = Math.min(1, s / ideal);
        const known = best.get(entry.position);
        if (known !== undefined && known.confidence >= confidence) continue;
        best.set(entry.position, {
          entry,
          confidence,
          coverage: Math.min(1, (explained[d] ?? 0) / ideal),
          words: words[d] ?? 0,
          evidence: evidence[d] ?? 0,
          rank: confidence,
        });
      }
      return [...best.values()].sort(
        (a, b) => b.rank - a.rank || a.entry.position - b.entry.position,
      );
    },
  };
}
