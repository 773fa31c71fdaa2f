/**
 * @module core/builtin/matching/term-resolver
 * Maps one token of a question to concepts of the knowledge index, trying in order:
 * 1. the token or one of its stems is in the vocabulary (`Anfragen` → `anfrag`), also
 *    after removing a German verb ending the stemmer leaves alone (`kostet` → `kost`);
 * 2. a German compound of vocabulary words (`Anfragelimit` → `anfrage` + `limit`,
 *    `Sitzungsdauer` → `sitzung` + `dauer`, linking `s` included);
 * 3. a typo: the closest vocabulary form within a Damerau-Levenshtein distance of 1
 *    (tokens of 5 to 8 letters) or 2 (9 letters or more), compared as written and, failing
 *    that, as German stem (`rotire` → `rotir` ≈ `roti`); shorter tokens are not corrected.
 * Tokens are resolved once and remembered in a bounded cache: the vocabulary of real
 * questions is small and repeats.
 */

import { formsOf, type KnowledgeIndex } from '../knowledge/knowledge-index.js';
import { boundedEditDistance } from '../text/edit-distance.js';
import { stemGerman } from '../text/german-stemmer.js';
import { isNumber } from '../text/tokenize.js';

/** One meaningful part of a token (a compound has several). */
export interface TermPart {
  /** The part's concepts; empty when the knowledge base does not know it. */
  readonly concepts: readonly number[];
  /** 1, or `TYPO_CERTAINTY` when the part was found as a typo of a vocabulary word. */
  readonly certainty: number;
}

/** `null`: the token is ignored (stop word). */
export type Resolution = readonly TermPart[] | null;

/**
 * A corrected typo may also be a different, real word ("Wetter" is one letter from
 * "weiter"), so it counts for less than an exact match.
 */
export const TYPO_CERTAINTY = 0.7;

const UNKNOWN: Resolution = [{ concepts: [], certainty: 1 }];
const exactPart = (concepts: readonly number[]): TermPart => ({ concepts, certainty: 1 });
const MIN_PART = 3;
/** Snowball keeps the -t of German verb forms (`kostet`, `zählt`, `rotiert`). */
const VERB_ENDINGS = ['est', 'et', 'st', 't'] as const;
const MIN_VERB_STEM = 4;
const MAX_PARTS = 3;
const CACHE_LIMIT = 4096;

export interface TermResolver {
  resolve(token: string): Resolution;
  /**
   * Two neighbouring tokens that are one vocabulary word when written together
   * ("time zone" → `timezone`, "Session-ID" → `sessionid`, "API key" → `apikey`).
   */
  joined(first: string, second: string): TermPart | undefined;
}

function typoBound(length: number): number {
  if (length >= 9) return 2;
  return length >= 5 ? 1 : 0;
}

export function createTermResolver(index: KnowledgeIndex): TermResolver {
  const cache = new Map<string, Resolution>();

  const lookup = (word: string): number[] | undefined => {
    const found: number[] = [];
    for (const form of formsOf(word)) {
      const concept = index.forms.get(form);
      if (concept !== undefined && !found.includes(concept)) found.push(concept);
    }
    return found.length > 0 ? found : undefined;
  };

  const exact = (word: string): number[] | undefined => {
    const direct = index.forms.get(word);
    if (direct !== undefined) return [direct];
    if (isNumber(word)) return undefined;
    const found = lookup(word);
    if (found !== undefined) return found;
    for (const ending of VERB_ENDINGS) {
      if (word.endsWith(ending) && word.length - ending.length >= MIN_VERB_STEM) {
        const verb = lookup(word.slice(0, -ending.length));
        if (verb !== undefined) return verb;
      }
    }
    return undefined;
  };

  const part = (word: string): number[] | undefined =>
    word.length < MIN_PART || index.ignored.has(word) || isNumber(word) ? undefined : exact(word);

  const split = (word: string, partsLeft: number): number[][] | undefined => {
    // Longest head first: it is the more specific reading of the compound.
    for (let cut = word.length - MIN_PART; cut >= MIN_PART; cut--) {
      const head = part(word.slice(0, cut));
      if (head === undefined) continue;
      const rest = word.slice(cut);
      const tail = part(rest);
      if (tail !== undefined) return [head, tail];
      const more = partsLeft > 2 ? split(rest, partsLeft - 1) : undefined;
      if (more !== undefined) return [head, ...more];
    }
    return undefined;
  };

  const nearest = (word: string): number[] | undefined => {
    const max = typoBound(word.length);
    if (max === 0 || isNumber(word)) return undefined;
    let best = max + 1;
    let found: number[] = [];
    const last = Math.min(word.length + max, index.formsByLength.length - 1);
    for (let length = Math.max(0, word.length - max); length <= last; length++) {
      for (const form of index.formsByLength[length] ?? []) {
        const distance = boundedEditDistance(word, form, Math.min(best, max));
        if (distance > max || distance > best) continue;
        const concept = index.forms.get(form) as number;
        if (distance < best) found = [concept];
        else if (!found.includes(concept)) found.push(concept);
        best = distance;
      }
    }
    return found.length > 0 ? found : undefined;
  };

  const compute = (token: string): Resolution => {
    if (index.ignored.has(token)) return null;
    const known = exact(token);
    if (known !== undefined) return [exactPart(known)];
    if (isNumber(token)) return UNKNOWN;
    const parts = token.length >= 2 * MIN_PART ? split(token, MAX_PARTS) : undefined;
    if (parts !== undefined) return parts.map(exactPart);
    const stem = stemGerman(token);
    const corrected = nearest(token) ?? (stem !== token ? nearest(stem) : undefined);
    return corrected === undefined ? UNKNOWN : [{ concepts: corrected, certainty: TYPO_CERTAINTY }];
  };

  return {
    joined(first, second) {
      if (isNumber(first) || isNumber(second)) return undefined;
      const concepts = lookup(first + second);
      return concepts === undefined ? undefined : exactPart(concepts);
    },
    resolve(token) {
      const cached = cache.get(token);
      if (cached !== undefined) return cached;
      const resolution = compute(token);
      if (cache.size >= CACHE_LIMIT) cache.clear();
      cache.set(token, resolution);
      return resolution;
    },
  };
}
