/**
 * @module core/builtin/matching/matcher
 * Scores knowledge entries against a query (a list of units, one per meaningful word).
 *
 * For an entry, `matched` is the sum over the query units it contains of
 * `unit.weight × unit.certainty × idf(concept)`; `total` is the sum of `unit.weight × idf`
 * over all units, where a word the knowledge base does not know counts `UNKNOWN_WEIGHT`,
 * for at most `MAX_UNKNOWN` such words (a question told with a long story around it is
 * judged by what it asks, not drowned in the story).
 * Then
 *
 *   confidence = (matched / total) × min(1, matched / FULL_EVIDENCE)
 *
 * The first factor is how much of the question the entry explains, the second how much
 * evidence there is at all (a single common word such as "plan" is weak evidence).
 * An entry whose `requires:` groups are not all met scores 0. An entry whose `requires:`
 * are met is a specific sub-topic and gets a small bonus over general entries ("Plus
 * limit" → the Plus entry, not the general limits entry); remaining ties go to the entry
 * that comes first in the file.
 */
import type { IndexedEntry, KnowledgeIndex } from '../knowledge/knowledge-index.js';

export interface QueryUnit {
  /** The unit's concepts; empty for a word the knowledge base does not know. */
  readonly concepts: readonly number[];
  /** 1 for words of the message itself, less for words carried over from earlier turns. */
  readonly weight: number;
  /** How sure the word is this concept: 1, less for a corrected typo. Scales `matched` only. */
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
  readonly confidence: number;
  /**
   * The share of the question's weight the entry explains; a corrected typo counts in full
   * here (it is explained), its lower certainty only in `confidence`.
   */
  readonly coverage: number;
  /** How many words of the question the entry contains. */
  readonly words: number;
  /** The IDF weight of those words (rare words say more). */
  readonly evidence: number;
  /** `confidence` plus the bonus for a met `requires:`; the sort key. */
  readonly rank: number;
}

const UNKNOWN_WEIGHT = 0.5;
const FULL_EVIDENCE = 0.9;
const MAX_UNKNOWN = 3;
/** The most unknown words may weigh together. */
const UNKNOWN_CAP = MAX_UNKNOWN * UNKNOWN_WEIGHT;
/** A real English word the knowledge base does not know names another topic. */
export const UNKNOWN_WORD_WEIGHT = 1;
const SPECIFIC_BONUS = 0.01;
/**
 * A word of the question found only in an entry's answer counts this share of what it would
 * as a keyword: the answer says what the entry is about, but in passing.
 */
const ANSWER_SHARE = 0.5;
const EXAMPLE_BONUS = 0.02;
/**
 * An example question is matched by its words alone, without the keywords' synonyms and
 * weights: it overrides the keywords only when it is close.
 */
const EXAMPLE_WEIGHT = 0.85;
/** Shared words an example question needs with a question of several words. */
const MIN_SHARED = 2;

export interface Matcher {
  /** All entries with a positive confidence, best first. */
  score(units: readonly QueryUnit[]): Match[];
  /**
   * The concepts of each entry's example questions as a question is read (compounds,
   * separable verbs, pairs of words), replacing the index's word-by-word reading.
   */
  useExamples(examples: ReadonlyArray<ReadonlyArray<Int32Array>>): void;
}

export function createMatcher(index: KnowledgeIndex): Matcher {
  const n = index.entries.length;
  // Scratch arrays reused by every query: matching runs on every request.
  const matched = new Float64Array(n);
  /** `matched` without the typos' lower certainty: how much of the question the entry explains. */
  const explained = new Float64Array(n);
  const unitBest = new Float64Array(n);
  const wordCount = new Int32Array(n);
  const unitSeen = new Int32Array(n);
  const present = new Int32Array(index.conceptCount);
  /** Per entry: `queryMark` when one of its example questions shares a concept with the query. */
  const sharesExample = new Int32Array(n);
  /** Per concept present in the query: the largest gain a unit naming it brings. */
  const gain = new Float64Array(index.conceptCount);
  const touched: number[] = [];
  let stamp = 0;

  /** Adds one unit to `matched` of every entry containing one of its concepts. */
  const addUnit = (unit: QueryUnit) => {
    stamp += 1;
    touched.length = 0;
    for (const concept of unit.concepts) {
      const idf = index.idf[concept] ?? 0;
      for (const position of index.postings[concept] ?? []) {
        if (unitSeen[position] !== stamp) {
          unitSeen[position] = stamp;
          unitBest[position] = idf;
          touched.push(position);
        } else if (idf > (unitBest[position] ?? 0)) unitBest[position] = idf;
      }
    }
    for (const position of touched) {
      wordCount[position] = (wordCount[position] ?? 0) + 1;
      const gain = unit.weight * unit.certainty * (unitBest[position] ?? 0);
      matched[position] = (matched[position] ?? 0) + gain;
      explained[position] = (explained[position] ?? 0) + gain / unit.certainty;
    }
  };

  const answerSeen = new Int32Array(n);
  const unknownUnits: QueryUnit[] = [];
  /**
   * Adds a unit whose word is in entries' answers to those it did not match as a keyword;
   * `weight` is what the unit adds to the question's total.
   */
  const addAnswer = (unit: QueryUnit, weight: number, keywordStamp: number) => {
    const words = unit.answer ?? [];
    if (weight <= 0) return;
    stamp += 1;
    // The words of an entry's example questions count the same way as those of its answer.
    for (const concept of unit.concepts) {
      const gain =
        unit.weight *
        unit.certainty *
        ANSWER_SHARE *
        Math.min(weight, index.exampleIdf[concept] ?? 0);
      for (const position of examplePostings[concept] ?? []) {
        if (unitSeen[position] === keywordStamp || answerSeen[position] === stamp) continue;
        answerSeen[position] = stamp;
        wordCount[position] = (wordCount[position] ?? 0) + 1;
        matched[position] = (matched[position] ?? 0) + gain;
        explained[position] = (explained[position] ?? 0) + gain / unit.certainty;
      }
    }
    for (const word of words) {
      const gain =
        unit.weight * unit.certainty * ANSWER_SHARE * Math.min(weight, index.answerIdf[word] ?? 0);
      for (const position of index.answerPostings[word] ?? []) {
        if (unitSeen[position] === keywordStamp || answerSeen[position] === stamp) continue;
        answerSeen[position] = stamp;
        wordCount[position] = (wordCount[position] ?? 0) + 1;
        matched[position] = (matched[position] ?? 0) + gain;
        explained[position] = (explained[position] ?? 0) + gain / unit.certainty;
      }
    }
  };

  /** The query's weight for the example questions (see `nearestExample`), set by `accumulate`. */
  let exampleTotal = 0;
  /** How many units the query has, known or not. */
  let unitCount = 0;

  /**
   * Fills `matched`, `present` and `gain`; returns the total weight of the query for the
   * keywords. A word only the example questions know counts as unknown there.
   */
  const accumulate = (units: readonly QueryUnit[], queryMark: number): number => {
    matched.fill(0);
    explained.fill(0);
    wordCount.fill(0);
    let total = 0;
    let unknown = 0;
    /** What the unknown words would weigh without the cap. */
    let unknownWanted = 0;
    unknownUnits.length = 0;
    let unknownForExamples = 0;
    exampleTotal = 0;
    unitCount = units.length;
    for (const unit of units) {
      let keywordIdf = 0;
      let exampleIdf = 0;
      for (const concept of unit.concepts) {
        const idf = index.exampleIdf[concept] ?? 0;
        const g = unit.weight * unit.certainty * idf;
        if (present[concept] !== queryMark) {
          gain[concept] = g;
          for (const position of exampleHolders[concept] ?? []) sharesExample[position] = queryMark;
        } else if (g > (gain[concept] ?? 0)) gain[concept] = g;
        present[concept] = queryMark;
        keywordIdf = Math.max(keywordIdf, index.idf[concept] ?? 0);
        exampleIdf = Math.max(exampleIdf, idf);
      }
      if (exampleIdf > 0) exampleTotal += unit.weight * exampleIdf;
      else {
        const add = Math.min(
          unit.unknownWeight ?? UNKNOWN_WEIGHT,
          UNKNOWN_CAP - unknownForExamples,
        );
        if (add > 0) exampleTotal += unit.weight * add;
        unknownForExamples += add;
      }
      if (keywordIdf === 0) {
        // Unknown words count up to a cap: a question told with a long story around it.
        const wanted = unit.unknownWeight ?? UNKNOWN_WEIGHT;
        const add = Math.min(wanted, UNKNOWN_CAP - unknown);
        if (add > 0) total += unit.weight * add;
        unknown += add;
        unknownWanted += wanted;
        if (unit.answer !== undefined || unit.concepts.length > 0) unknownUnits.push(unit);
        continue;
      }
      total += unit.weight * keywordIdf;
      addUnit(unit);
      addAnswer(unit, keywordIdf, stamp);
    }
    // Each unknown word has its share of the capped weight, wherever it stands in the question.
    const share = unknownWanted > 0 ? unknown / unknownWanted : 0;
    for (const unit of unknownUnits) {
      addAnswer(unit, (unit.unknownWeight ?? UNKNOWN_WEIGHT) * share, -1);
    }
    return total;
  };

  /** Every group of the entry's required concepts has one in the query (loops: no callbacks). */
  const requiresMet = (entry: IndexedEntry, queryMark: number) => {
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
   * How close the query is to the entry's closest example question: the weighted Dice
   * coefficient of their concepts, so an example asked in other words (most of its rare
   * words, few others) scores high even where the keywords alone are weak.
   */
  let examplesOf: ReadonlyArray<ReadonlyArray<Int32Array>> = index.entries.map((e) => e.examples);
  /** Per concept: the entries whose example questions have it and whose keywords do not. */
  let examplePostings: number[][] = [];
  /** Per concept: every entry whose example questions have it. */
  let exampleHolders: number[][] = [];
  const postExamples = () => {
    examplePostings = Array.from({ length: index.conceptCount }, () => []);
    exampleHolders = Array.from({ length: index.conceptCount }, () => []);
    examplesOf.forEach((examples, position) => {
      const concepts = index.entries[position]?.concepts;
      for (const concept of new Set(examples.flatMap((example) => [...example]))) {
        exampleHolders[concept]?.push(position);
        if (!concepts?.has(concept)) examplePostings[concept]?.push(position);
      }
    });
  };
  postExamples();
  const nearestExample = (entry: IndexedEntry, queryMark: number): number => {
    let best = 0;
    for (const example of examplesOf[entry.position] ?? []) {
      let shared = 0;
      let sharedWords = 0;
      let own = 0;
      for (let i = 0; i < example.length; i++) {
        const concept = example[i];
        if (concept === undefined) break;
        own += index.exampleIdf[concept] ?? 0;
        if (present[concept] === queryMark) {
          shared += gain[concept] ?? 0;
          sharedWords += 1;
        }
      }
      // One shared word is evidence only when it is all the question says.
      if (sharedWords >= MIN_SHARED || (sharedWords === 1 && unitCount === 1)) {
        const dice = (2 * shared) / (exampleTotal + own);
        best = Math.max(best, EXAMPLE_WEIGHT * dice * Math.min(1, shared / FULL_EVIDENCE));
      }
    }
    return best;
  };

  return {
    useExamples(examples) {
      examplesOf = examples;
      postExamples();
    },
    score(units) {
      stamp += 1;
      const queryMark = stamp;
      const total = accumulate(units, queryMark);
      const matches: Match[] = [];
      if (total <= 0 && exampleTotal <= 0) return matches;
      for (const entry of index.entries) {
        // An entry the query shares no word with, in its keywords, answer or examples, scores 0.
        const position = entry.position;
        if (sharesExample[position] !== queryMark && !((matched[position] ?? 0) > 0)) continue;
        const example =
          sharesExample[position] === queryMark ? nearestExample(entry, queryMark) : 0;
        // `requires:` keeps keywords from answering too widely; a close example question is
        // specific enough on its own (unless the answer needs the plan the question names).
        const met = requiresMet(entry, queryMark);
        const m = met ? (matched[entry.position] ?? 0) : 0;
        if (m <= 0 && (example <= 0 || (!met && entry.planBound))) continue;
        const coverage = total > 0 ? m / total : 0;
        const confidence = Math.max(coverage * Math.min(1, m / FULL_EVIDENCE), example);
        const share = total > 0 && met ? (explained[entry.position] ?? 0) / total : 0;
        const bonus = entry.requires.length > 0 && met ? SPECIFIC_BONUS : 0;
        const counted = wordCount[entry.position] ?? 0;
        // A close example question is evidence of its own, as strong as its similarity.
        const byExample = example > coverage;
        matches.push({
          entry,
          confidence,
          coverage: byExample ? Math.max(example, share) : share,
          words: byExample ? Math.max(counted, MIN_SHARED) : counted,
          evidence: byExample ? Math.max(m, FULL_EVIDENCE) : m,
          // An example asked almost word for word decides between entries that tie.
          rank: confidence + bonus + EXAMPLE_BONUS * example,
        });
      }
      return matches.sort((a, b) => b.rank - a.rank || a.entry.position - b.entry.position);
    },
  };
}
