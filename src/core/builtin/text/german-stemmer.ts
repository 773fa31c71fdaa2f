/**
 * @module core/builtin/text/german-stemmer
 * The Snowball German stemmer (https://snowballstem.org/algorithms/german/stemmer.html),
 * written out by hand so the core needs no dependency. Input is one lower-case word;
 * umlauts may already be folded (`ä` → `a`), which the algorithm tolerates because it
 * folds them itself at the end.
 */

const VOWELS = new Set(['a', 'e', 'i', 'o', 'u', 'y', 'ä', 'ö', 'ü']);
const S_ENDINGS = new Set(['b', 'd', 'f', 'g', 'h', 'k', 'l', 'm', 'n', 'r', 't']);
const ST_ENDINGS = new Set(['b', 'd', 'f', 'g', 'h', 'k', 'l', 'm', 'n', 't']);

const STEP1 = ['ern', 'em', 'er', 'en', 'es', 'e', 's'] as const;
const STEP2 = ['est', 'en', 'er', 'st'] as const;
const STEP3 = ['isch', 'lich', 'heit', 'keit', 'end', 'ung', 'ig', 'ik'] as const;

function isVowel(c: string | undefined): boolean {
  return c !== undefined && VOWELS.has(c);
}

/** Start of the region after the first non-vowel that follows a vowel, scanning from `from`. */
function regionAfter(w: string, from: number): number {
  for (let i = from + 1; i < w.length; i++) {
    if (!isVowel(w[i]) && isVowel(w[i - 1])) return i + 1;
  }
  return w.length;
}

/** The longest suffix of `w` from `list` (the list is ordered longest first). */
function longestSuffix(w: string, list: readonly string[]): string | undefined {
  for (const suffix of list) if (w.endsWith(suffix)) return suffix;
  return undefined;
}

/** `u` and `y` between vowels act as consonants; they are marked upper case meanwhile. */
function markConsonantUY(word: string): string {
  let out = '';
  for (let i = 0; i < word.length; i++) {
    const c = word[i] as string;
    const between = i > 0 && isVowel(word[i - 1]) && isVowel(word[i + 1]);
    out += between && (c === 'u' || c === 'y') ? c.toUpperCase() : c;
  }
  return out;
}

function step1(w: string, r1: number): string {
  const suffix = longestSuffix(w, STEP1);
  if (suffix === undefined || w.length - suffix.length < r1) return w;
  const stem = w.slice(0, -suffix.length);
  if (suffix === 's') return S_ENDINGS.has(stem.at(-1) ?? '') ? stem : w;
  if ((suffix === 'e' || suffix === 'en' || suffix === 'es') && stem.endsWith('niss')) {
    return stem.slice(0, -1);
  }
  return stem;
}

function step2(w: string, r1: number): string {
  const suffix = longestSuffix(w, STEP2);
  if (suffix === undefined || w.length - suffix.length < r1) return w;
  const stem = w.slice(0, -suffix.length);
  if (suffix !== 'st') return stem;
  // `st` goes only after a valid st-ending that itself has at least three letters before it.
  return ST_ENDINGS.has(stem.at(-1) ?? '') && stem.length - 1 >= 3 ? stem : w;
}

function step3(w: string, r1: number, r2: number): string {
  const suffix = longestSuffix(w, STEP3);
  if (suffix === undefined || w.length - suffix.length < r2) return w;
  let stem = w.slice(0, -suffix.length);
  const inR2 = (s: string, tail: string) => s.endsWith(tail) && s.length - tail.length >= r2;
  const inR1 = (s: string, tail: string) => s.endsWith(tail) && s.length - tail.length >= r1;
  switch (suffix) {
    case 'end':
    case 'ung':
      if (inR2(stem, 'ig') && !stem.endsWith('eig')) stem = stem.slice(0, -2);
      return stem;
    case 'ig':
    case 'ik':
    case 'isch':
      return stem.endsWith('e') ? w : stem;
    case 'lich':
    case 'heit':
      if (inR1(stem, 'er') || inR1(stem, 'en')) stem = stem.slice(0, -2);
      return stem;
    default: // keit
      if (inR2(stem, 'lich')) return stem.slice(0, -4);
      if (inR2(stem, 'ig')) return stem.slice(0, -2);
      return stem;
  }
}

function unmark(w: string): string {
  let out = '';
  for (const c of w) {
    if (c === 'U') out += 'u';
    else if (c === 'Y') out += 'y';
    else if (c === 'ä') out += 'a';
    else if (c === 'ö') out += 'o';
    else if (c === 'ü') out += 'u';
    else out += c;
  }
  return out;
}

/** Returns the Snowball German stem of a lower-case word. */
export function stemGerman(word: string): string {
  const w0 = markConsonantUY(word.replaceAll('ß', 'ss'));
  const r1Raw = regionAfter(w0, 0);
  const r2 = regionAfter(w0, r1Raw);
  const r1 = Math.max(r1Raw, 3);
  const w1 = step1(w0, r1);
  const w2 = step2(w1, r1);
  const w3 = step3(w2, r1, r2);
  return unmark(w3);
}
