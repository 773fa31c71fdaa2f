/**
 * @module core/builtin/matching/typo-search
 * Finds the vocabulary forms closest to a misspelt word: Damerau-Levenshtein distance at
 * most 1 for words of 5 to 8 letters, at most 2 for words of 9 letters or more; shorter
 * words are not corrected. The forms are bucketed by length, and two cheap tests rule out
 * most candidates before the distance is computed:
 * - the sets of letters may differ by at most 2 per edit (a bit mask per form);
 * - with one edit allowed, the first two letters must line up in some way.
 */
import { boundedEditDistance } from '../text/edit-distance.js';
import { isNumber } from '../text/tokenize.js';

/** Forms shorter than this are never the target of a correction: too easy to hit by chance. */
const MIN_FORM_LENGTH = 4;

export interface TypoSearch {
  /** The concepts of the closest forms, or `undefined` when none is close enough. */
  nearest(word: string): number[] | undefined;
}

/** At most how many edits a word of this length may contain. */
function typoBound(length: number): number {
  if (length >= 9) return 2;
  return length >= 5 ? 1 : 0;
}

function letterMask(word: string): number {
  let mask = 0;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c >= 97 && c <= 122) mask |= 1 << (c - 97);
    else mask |= 1 << (26 + (c % 6));
  }
  return mask;
}

function bitCount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** With one edit, the first two letters match, or one of them moved by one place. */
function startsLineUp(a: string, b: string): boolean {
  const a0 = a[0];
  const a1 = a[1];
  return a0 === b[0] || a1 === b[1] || a0 === b[1] || a1 === b[0];
}

interface Bucket {
  readonly forms: string[];
  readonly masks: number[];
  readonly concepts: number[];
}

export function createTypoSearch(forms: ReadonlyMap<string, number>): TypoSearch {
  const buckets: Bucket[] = [];
  for (const [form, concept] of forms) {
    if (form.length < MIN_FORM_LENGTH || isNumber(form)) continue;
    buckets[form.length] ??= { forms: [], masks: [], concepts: [] };
    const bucket = buckets[form.length] as Bucket;
    bucket.forms.push(form);
    bucket.masks.push(letterMask(form));
    bucket.concepts.push(concept);
  }

  return {
    nearest(word) {
      const max = typoBound(word.length);
      if (max === 0 || isNumber(word)) return undefined;
      const mask = letterMask(word);
      let best = max + 1;
      let found: number[] = [];
      for (let length = word.length - max; length <= word.length + max; length++) {
        const bucket = buckets[length];
        if (bucket === undefined) continue;
        for (let i = 0; i < bucket.forms.length; i++) {
          const form = bucket.forms[i];
          const concept = bucket.concepts[i];
          if (form === undefined || concept === undefined) break;
          const bound = Math.min(best, max);
          if (bitCount(mask ^ (bucket.masks[i] ?? 0)) > 2 * bound) continue;
          if (bound === 1 && !startsLineUp(word, form)) continue;
          const distance = boundedEditDistance(word, form, bound);
          if (distance > max || distance > best) continue;
          if (distance < best) found = [concept];
          else if (!found.includes(concept)) found.push(concept);
          best = distance;
        }
      }
      return found.length > 0 ? found : undefined;
    },
  };
}
