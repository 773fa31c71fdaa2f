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
}

export interface Match {
  readonly entry: IndexedEntry;
  readonly confidence: number;
  /** The share of the question's weight the entry explains. */
  readonly coverage: number;
  /** How many words of the question the entry contains. */
  readonly words: number;
  /** The IDF weight of those words (rare words say more). */
  readonly evidence: number;
  /** `confidence` plus the bonus for a met `requires:`; the sort key. */
  readonly rank: number;
}

export const UNKNOWN_WEIGHT = 0.5;
export const FULL_EVIDENCE = 0.9;
const MAX_UNKNOWN = 3;
const SPECIFIC_BONUS = 0.01;

export interface Matcher {
  /** All entries with a positive confidence, best first. */
  score(units: readonly QueryUnit[]): Match[];
}

function maxIdf(index: KnowledgeIndex, concepts: readonly number[]): number {
  let best = 0;
  for (const concept of concepts) best = Math.max(best, index.idf[concept] ?? 0);
  return best;
}

export function createMatcher(index: KnowledgeIndex): Matcher {
  const n = index.entries.length;
  // Scratch arrays reused by every query: matching runs on every request.
  const matched = new Float64Array(n);
  const unitBest = new Float64Array(n);
  const wordCount = new Int32Array(n);
  const unitSeen = new Int32Array(n);
  const present = new Int32Array(index.conceptCount);
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
        } else if (idf > (unitBest[position] as number)) unitBest[position] = idf;
      }
    }
    for (const position of touched) {
      wordCount[position] = (wordCount[position] as number) + 1;
      const gain = unit.weight * unit.certainty * (unitBest[position] as number);
      matched[position] = (matched[position] as number) + gain;
    }
  };

  /** Fills `matched` and `present`; returns the total weight of the query. */
  const accumulate = (units: readonly QueryUnit[], queryMark: number): number => {
    matched.fill(0);
    wordCount.fill(0);
    let total = 0;
    let unknown = 0;
    for (const unit of units) {
      for (const concept of unit.concepts) {
        const g = unit.weight * unit.certainty * (index.idf[concept] ?? 0);
        if (present[concept] !== queryMark || g > (gain[concept] as number)) gain[concept] = g;
        present[concept] = queryMark;
      }
      if (unit.concepts.length === 0) {
        unknown += 1;
        if (unknown <= MAX_UNKNOWN) total += unit.weight * UNKNOWN_WEIGHT;
        continue;
      }
      total += unit.weight * maxIdf(index, unit.concepts);
      addUnit(unit);
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
  const nearestExample = (entry: IndexedEntry, total: number, queryMark: number): number => {
    let best = 0;
    for (const example of entry.examples) {
      let shared = 0;
      let own = 0;
      for (let i = 0; i < example.length; i++) {
        const concept = example[i] as number;
        const idf = index.idf[concept] ?? 0;
        own += idf;
        if (present[concept] === queryMark) shared += gain[concept] as number;
      }
      if (shared > 0) best = Math.max(best, (2 * shared) / (total + own));
    }
    return best;
  };

  return {
    score(units) {
      stamp += 1;
      const queryMark = stamp;
      const total = accumulate(units, queryMark);
      const matches: Match[] = [];
      if (total <= 0) return matches;
      for (const entry of index.entries) {
        const m = matched[entry.position] as number;
        if (m <= 0 || !requiresMet(entry, queryMark)) continue;
        const coverage = m / total;
        const confidence = Math.max(
          coverage * Math.min(1, m / FULL_EVIDENCE),
          nearestExample(entry, total, queryMark),
        );
        const bonus = entry.requires.length > 0 ? SPECIFIC_BONUS : 0;
        const words = wordCount[entry.position] as number;
        matches.push({ entry, confidence, coverage, words, evidence: m, rank: confidence + bonus });
      }
      return matches.sort((a, b) => b.rank - a.rank || a.entry.position - b.entry.position);
    },
  };
}
