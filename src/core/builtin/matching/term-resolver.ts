/**
 * @module core/builtin/matching/term-resolver
 * Maps one token of a question to concepts of the knowledge index, trying in order:
 * 1. the token or one of its stems is in the vocabulary (`Anfragen` → `anfrag`);
 * 2. a German compound of vocabulary words (`Anfragelimit` → `anfrage` + `limit`,
 *    `Sitzungsdauer` → `sitzung` + `dauer`, linking `s` included);
 * 3. a typo: the closest vocabulary form within a Damerau-Levenshtein distance of 1
 *    (tokens of 5 to 8 letters) or 2 (9 letters or more); shorter tokens are not corrected.
 * Tokens are resolved once and remembered in a bounded cache: the vocabulary of real
 * questions is small and repeats.
 */
import { boundedEditDistance } from '../text/edit-distance.js';
import { isNumber } from '../text/tokenize.js';
import { formsOf, type KnowledgeIndex } from '../knowledge/knowledge-index.js';

/**
 * `null`: the token is ignored (stop word). Otherwise one array per meaningful part (a
 * compound has several); each part lists its concepts, empty when the part is unknown.
 */
export type Resolution = ReadonlyArray<readonly number[]> | null;

const UNKNOWN: Resolution = [[]];
const MIN_PART = 3;
const MAX_PARTS = 3;
const CACHE_LIMIT = 4096;

export interface TermResolver {
  resolve(token: string): Resolution;
}

function typoBound(length: number): number {
  if (length >= 9) return 2;
  return length >= 5 ? 1 : 0;
}

export function createTermResolver(index: KnowledgeIndex): TermResolver {
  const cache = new Map<string, Resolution>();

  const exact = (word: string): number[] | undefined => {
    const direct = index.forms.get(word);
    if (direct !== undefined) return [direct];
    if (isNumber(word)) return undefined;
    const found: number[] = [];
    for (const form of formsOf(word)) {
      const concept = index.forms.get(form);
      if (concept !== undefined && !found.includes(concept)) found.push(concept);
    }
    return found.length > 0 ? found : undefined;
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
    if (known !== undefined) return [known];
    if (isNumber(token)) return UNKNOWN;
    const parts = token.length >= 2 * MIN_PART ? split(token, MAX_PARTS) : undefined;
    if (parts !== undefined) return parts;
    const corrected = nearest(token);
    return corrected === undefined ? UNKNOWN : [corrected];
  };

  return {
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
