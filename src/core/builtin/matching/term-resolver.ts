/**
 * @module core/builtin/matching/term-resolver
 * Maps one token of a question to concepts of the knowledge index, trying in order:
 * 1. the token or one of its stems is in the vocabulary (`Anfragen` → `anfrag`), also
 *    after removing a German verb ending the stemmer leaves alone (`kostet` → `kost`);
 * 2. a German compound of vocabulary words (`Anfragelimit` → `anfrage` + `limit`,
 *    `Sitzungsdauer` → `sitzung` + `dauer`, linking `s` included);
 * 3. an infinitive with "zu" inside a separable verb (`zurückzuschicken` → `zurückschicken`);
 * 4. a typo: the closest vocabulary form within a Damerau-Levenshtein distance of 1
 *    (tokens of 5 to 8 letters) or 2 (9 letters or more), compared as written and, failing
 *    that, as German stem (`rotire` → `rotir` ≈ `roti`); shorter tokens are not corrected.
 * Tokens, and pairs of neighbouring tokens tried as one word, are resolved once and
 * remembered in bounded caches: the vocabulary of real questions is small and repeats, and a
 * session's earlier turns are read again on each of its requests.
 */

import { formsOf, type KnowledgeIndex } from '../knowledge/knowledge-index.js';
import { BoundedCache } from '../text/bounded-cache.js';
import { boundedEditDistance } from '../text/edit-distance.js';
import { isEnglishWord } from '../text/english-words.js';
import { stemGerman } from '../text/stemmers.js';
import { isNumber } from '../text/tokenize.js';
import { createCompoundSplitter, MIN_PART } from './compound-splitter.js';
import { createTypoSearch } from './typo-search.js';

/** One meaningful part of a token (a compound has several). */
export interface TermPart {
  /** The part's concepts; empty when the knowledge base does not know it. */
  readonly concepts: readonly number[];
  /** 1, or `TYPO_CERTAINTY` when the part was found as a typo of a vocabulary word. */
  readonly certainty: number;
}

/** `null`: the token is ignored (stop word). */
type Resolution = readonly TermPart[] | null;

/**
 * A corrected typo may also be a different, real word ("Wetter" is one letter from
 * "weiter"), so it counts for less than an exact match.
 */
export const TYPO_CERTAINTY = 0.7;

const UNKNOWN: Resolution = [{ concepts: [], certainty: 1 }];
const exactPart = (concepts: readonly number[]): TermPart => ({ concepts, certainty: 1 });
/** Particles of German separable verbs (folded): "setzt ... zurück", "zurückzusetzen". */
export const SEPARABLE_PARTICLES: ReadonlySet<string> = new Set(
  'ab an auf aus bei ein mit nach vor weg zu zuruck zusammen fest los hoch um durch her hin'.split(
    ' ',
  ),
);
/** The shortest verb left after a particle and "zu" ("abzuholen" → "holen"). */
const MIN_ZU_VERB = 4;

/** Snowball keeps the -t of German verb forms (`kostet`, `zählt`, `rotiert`). */
const VERB_ENDINGS = ['est', 'et', 'st', 't'] as const;
const MIN_VERB_STEM = 4;
const CACHE_LIMIT = 4096;
/** Longer tokens (pasted hashes, base64, runs of letters) are no words: not worth the search. */
const MAX_WORD_LENGTH = 40;

export interface TermResolver {
  resolve(token: string): Resolution;
  /**
   * Two neighbouring tokens that are one vocabulary word when written together
   * ("time zone" → `timezone`, "Session-ID" → `sessionid`, "API key" → `apikey`).
   */
  joined(first: string, second: string): TermPart | undefined;
  /**
   * A word of 3 or 4 letters that is no English word, read as a typo of a vocabulary word
   * one edit away ("kye" → `key`, "limt" → `limit`); only for English text, where the
   * dictionary can tell a typo from a real word.
   */
  shortTypo(token: string): TermPart | undefined;
  /** The answer words (`KnowledgeIndex.answerForms`) the token is one of; empty if none. */
  answerWords(token: string): readonly number[];
}

/** The concepts of a word through its forms (itself, German stem, English stem). */
function createLookup(forms: ReadonlyMap<string, number>) {
  const lookup = (word: string): number[] | undefined => {
    const direct = forms.get(word);
    if (direct !== undefined) return [direct];
    if (isNumber(word)) return undefined;
    const found: number[] = [];
    for (const form of formsOf(word)) {
      const concept = forms.get(form);
      if (concept !== undefined && !found.includes(concept)) found.push(concept);
    }
    return found.length > 0 ? found : undefined;
  };
  const withVerbEndings = (word: string): number[] | undefined => {
    const found = lookup(word);
    if (found !== undefined || isNumber(word)) return found;
    for (const ending of VERB_ENDINGS) {
      if (word.endsWith(ending) && word.length - ending.length >= MIN_VERB_STEM) {
        const verb = word.slice(0, -ending.length);
        const concept = forms.get(verb) ?? forms.get(stemGerman(verb));
        if (concept !== undefined) return [concept];
      }
    }
    return undefined;
  };
  return { lookup, withVerbEndings };
}

export function createTermResolver(index: KnowledgeIndex): TermResolver {
  const cache = new BoundedCache<string, Resolution>(CACHE_LIMIT);
  const pairs = new BoundedCache<string, TermPart | null>(CACHE_LIMIT);
  const { lookup, withVerbEndings } = createLookup(index.forms);
  const starts = new Set([...index.forms.keys()].map((form) => form.slice(0, MIN_PART)));
  const compounds = createCompoundSplitter(
    (part) => (index.ignored.has(part) || isNumber(part) ? undefined : withVerbEndings(part)),
    starts,
  );
  const typos = createTypoSearch(index.forms);
  /** A German verb ending after a misspelt stem: "resettet" → "resett" ≈ "reset". */
  const nearestWithoutEnding = (token: string): number[] | undefined => {
    for (const ending of VERB_ENDINGS) {
      if (token.endsWith(ending) && token.length - ending.length >= 5) {
        const found = typos.nearest(token.slice(0, -ending.length));
        if (found !== undefined) return found;
      }
    }
    return undefined;
  };
  /** Vocabulary forms a short typo may stand for: 3 to 5 letters, no numbers. */
  const shortForms = [...index.forms].filter(
    ([form]) => form.length >= 3 && form.length <= 5 && !isNumber(form),
  );
  const shortTypos = new BoundedCache<string, TermPart | null>(CACHE_LIMIT);
  const shortTypo = (token: string): TermPart | null => {
    if (token.length < 3 || token.length > 4 || isNumber(token) || isEnglishWord(token)) {
      return null;
    }
    // The first letter is rarely the one mistyped: "kee" is "key" rather than "see".
    const concepts: number[] = [];
    const sameStart: number[] = [];
    for (const [form, concept] of shortForms) {
      if (Math.abs(form.length - token.length) > 1 || concepts.includes(concept)) continue;
      if (boundedEditDistance(token, form, 1) <= 1) {
        concepts.push(concept);
        if (form[0] === token[0]) sameStart.push(concept);
      }
    }
    const found = sameStart.length > 0 ? sameStart : concepts;
    return found.length > 0 ? { concepts: found, certainty: TYPO_CERTAINTY } : null;
  };
  /**
   * "limt" → `limit`: a word of 3 or 4 letters that is one letter short of a vocabulary word
   * with the same first letter, and no English word. A dropped letter is the common typo of
   * short words, and unlike a changed one rarely makes another real word.
   */
  const missingLetter = (token: string): number[] | undefined => {
    if (token.length < 3 || token.length > 4 || isNumber(token) || isEnglishWord(token)) {
      return undefined;
    }
    const concepts: number[] = [];
    for (const [form, concept] of shortForms) {
      if (form.length !== token.length + 1 || form[0] !== token[0]) continue;
      if (!concepts.includes(concept) && boundedEditDistance(token, form, 1) <= 1) {
        concepts.push(concept);
      }
    }
    return concepts.length > 0 ? concepts : undefined;
  };
  const shortStopWords = [...index.ignored].filter((word) => word.length >= 3 && word.length <= 5);
  const stopWordTypo = (token: string): boolean =>
    token.length >= 3 &&
    token.length <= 4 &&
    shortStopWords.some((word) => boundedEditDistance(token, word, 1) <= 1);

  /** "zurückzuschicken" → the concepts of "zurückschicken". */
  const withoutZu = (token: string): number[] | undefined => {
    for (const particle of SEPARABLE_PARTICLES) {
      const verb = token.length - particle.length - 2;
      if (verb < MIN_ZU_VERB || !token.startsWith(`${particle}zu`)) continue;
      const found = withVerbEndings(particle + token.slice(particle.length + 2));
      if (found !== undefined) return found;
    }
    return undefined;
  };

  const compute = (token: string): Resolution => {
    if (index.ignored.has(token)) return null;
    if (token.length > MAX_WORD_LENGTH) return UNKNOWN;
    const known = withVerbEndings(token);
    if (known !== undefined) return [exactPart(known)];
    if (isNumber(token)) return UNKNOWN;
    const infinitive = withoutZu(token);
    if (infinitive !== undefined) return [exactPart(infinitive)];
    const parts = compounds.split(token);
    if (parts !== undefined) return parts.map(exactPart);
    const stem = stemGerman(token);
    const corrected =
      typos.nearest(token) ??
      (stem !== token ? typos.nearest(stem) : undefined) ??
      nearestWithoutEnding(token) ??
      missingLetter(token);
    if (corrected !== undefined) return [{ concepts: corrected, certainty: TYPO_CERTAINTY }];
    // "wht", "ovr", "teh": a short misspelt stop word carries no topic either; a real word
    // ("bike", "car") is no typo.
    return stopWordTypo(token) && !isEnglishWord(token) ? null : UNKNOWN;
  };

  const answerWords = new BoundedCache<string, readonly number[]>(CACHE_LIMIT);
  const answerTypos = createTypoSearch(index.answerForms);
  const NO_WORDS: readonly number[] = [];
  const findAnswerWords = (token: string): readonly number[] => {
    if (index.ignored.has(token) || token.length > MAX_WORD_LENGTH) return NO_WORDS;
    const ids = new Set(formsOf(token).flatMap((form) => index.answerForms.get(form) ?? []));
    if (ids.size > 0) return [...ids];
    // "östereich" for the answer's "Österreich"; a real English word is no typo.
    if (isEnglishWord(token)) return NO_WORDS;
    return answerTypos.nearest(token) ?? NO_WORDS;
  };

  return {
    answerWords(token) {
      let ids = answerWords.get(token);
      if (ids === undefined) {
        ids = findAnswerWords(token);
        answerWords.set(token, ids);
      }
      return ids;
    },
    shortTypo(token) {
      let part = shortTypos.get(token);
      if (part === undefined) {
        part = shortTypo(token);
        shortTypos.set(token, part);
      }
      return part ?? undefined;
    },
    joined(first, second) {
      if (isNumber(first) || isNumber(second)) return undefined;
      const word = first + second;
      if (!starts.has(word.slice(0, MIN_PART)) || word.length > MAX_WORD_LENGTH) return undefined;
      const cached = pairs.get(word);
      if (cached !== undefined) return cached ?? undefined;
      const concepts = lookup(word);
      const part = concepts === undefined ? null : exactPart(concepts);
      pairs.set(word, part);
      return part ?? undefined;
    },
    resolve(token) {
      const cached = cache.get(token);
      if (cached !== undefined) return cached;
      const resolution = compute(token);
      cache.set(token, resolution);
      return resolution;
    },
  };
}
