/**
 * @module core/builtin/text/english-stemmer
 * The Snowball English ("Porter2") stemmer (https://snowballstem.org/algorithms/english/stemmer.html),
 * written out by hand so the core needs no dependency. Input is one lower-case word.
 */

const EXCEPTIONS = new Map([
  ['skis', 'ski'],
  ['skies', 'sky'],
  ['dying', 'die'],
  ['lying', 'lie'],
  ['tying', 'tie'],
  ['idly', 'idl'],
  ['gently', 'gentl'],
  ['ugly', 'ugli'],
  ['early', 'earli'],
  ['only', 'onli'],
  ['singly', 'singl'],
  ['sky', 'sky'],
  ['news', 'news'],
  ['howe', 'howe'],
  ['atlas', 'atlas'],
  ['cosmos', 'cosmos'],
  ['bias', 'bias'],
  ['andes', 'andes'],
]);
const AFTER_STEP1A = new Set([
  'inning',
  'outing',
  'canning',
  'herring',
  'earring',
  'proceed',
  'exceed',
  'succeed',
]);
const APOSTROPHE_S = /'(s'?)?$/;
const SPECIAL_PREFIXES = ['gener', 'commun', 'arsen'] as const;
const EED_SUFFIXES = ['eedly', 'eed'] as const;
const ED_ING_SUFFIXES = ['ingly', 'edly', 'ing', 'ed'] as const;
const DOUBLES = new Set(['bb', 'dd', 'ff', 'gg', 'mm', 'nn', 'pp', 'rr', 'tt']);
const LI_ENDINGS = new Set(['c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't']);

const STEP2: ReadonlyArray<readonly [string, string]> = [
  ['ization', 'ize'],
  ['ational', 'ate'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['iveness', 'ive'],
  ['tional', 'tion'],
  ['biliti', 'ble'],
  ['lessli', 'less'],
  ['entli', 'ent'],
  ['ation', 'ate'],
  ['alism', 'al'],
  ['aliti', 'al'],
  ['ousli', 'ous'],
  ['iviti', 'ive'],
  ['fulli', 'ful'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['abli', 'able'],
  ['izer', 'ize'],
  ['ator', 'ate'],
  ['alli', 'al'],
  ['bli', 'ble'],
  ['ogi', 'og'],
  ['li', ''],
];
const STEP3: ReadonlyArray<readonly [string, string]> = [
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['alize', 'al'],
  ['icate', 'ic'],
  ['iciti', 'ic'],
  ['ative', ''],
  ['ical', 'ic'],
  ['ness', ''],
  ['ful', ''],
];
const STEP4 = [
  'ement',
  'ance',
  'ence',
  'able',
  'ible',
  'ment',
  'ant',
  'ent',
  'ism',
  'ate',
  'iti',
  'ous',
  'ive',
  'ize',
  'ion',
  'al',
  'er',
  'ic',
] as const;

function isVowel(c: string | undefined): boolean {
  return c === 'a' || c === 'e' || c === 'i' || c === 'o' || c === 'u' || c === 'y';
}

function hasVowel(w: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (isVowel(w[i])) return true;
  return false;
}

/** Start of the region after the first non-vowel that follows a vowel, scanning from `from`. */
function regionAfter(w: string, from: number): number {
  for (let i = from + 1; i < w.length; i++) {
    if (!isVowel(w[i]) && isVowel(w[i - 1])) return i + 1;
  }
  return w.length;
}

/** Whether `w` (up to `end`) ends in a short syllable. */
function endsShort(w: string, end = w.length): boolean {
  const a = w[end - 3];
  const b = w[end - 2];
  const c = w[end - 1];
  if (end === 2) return isVowel(b) && !isVowel(c);
  return (
    end >= 3 && !isVowel(a) && isVowel(b) && !isVowel(c) && c !== 'w' && c !== 'x' && c !== 'Y'
  );
}

function markY(word: string): string {
  let out = '';
  for (let i = 0; i < word.length; i++) {
    const c = word[i] as string;
    out += c === 'y' && (i === 0 || isVowel(word[i - 1])) ? 'Y' : c;
  }
  return out;
}

function step1a(w: string): string {
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('ied') || w.endsWith('ies')) return w.length > 4 ? w.slice(0, -2) : w.slice(0, -1);
  if (w.endsWith('us') || w.endsWith('ss')) return w;
  if (w.endsWith('s') && hasVowel(w, w.length - 2)) return w.slice(0, -1);
  return w;
}

function step1b(w: string, r1: number): string {
  for (const suffix of EED_SUFFIXES) {
    if (w.endsWith(suffix))
      return w.length - suffix.length >= r1 ? `${w.slice(0, -suffix.length)}ee` : w;
  }
  const suffix = ED_ING_SUFFIXES.find((s) => w.endsWith(s));
  if (suffix === undefined || !hasVowel(w, w.length - suffix.length)) return w;
  const stem = w.slice(0, -suffix.length);
  if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return `${stem}e`;
  if (DOUBLES.has(stem.slice(-2))) return stem.slice(0, -1);
  if (r1 >= stem.length && endsShort(stem)) return `${stem}e`;
  return stem;
}

function step1c(w: string): string {
  const last = w.at(-1);
  if ((last === 'y' || last === 'Y') && w.length > 2 && !isVowel(w.at(-2))) {
    return `${w.slice(0, -1)}i`;
  }
  return w;
}

function replaceIn(w: string, r1: number, rules: ReadonlyArray<readonly [string, string]>): string {
  const rule = rules.find(([suffix]) => w.endsWith(suffix));
  if (rule === undefined) return w;
  const [suffix, replacement] = rule;
  const start = w.length - suffix.length;
  if (start < r1) return w;
  if (suffix === 'ogi' && w[start - 1] !== 'l') return w;
  if (suffix === 'li' && !LI_ENDINGS.has(w[start - 1] ?? '')) return w;
  return w.slice(0, start) + replacement;
}

function step3(w: string, r1: number, r2: number): string {
  const rule = STEP3.find(([suffix]) => w.endsWith(suffix));
  if (rule?.[0] === 'ative' && w.length - 5 < r2) return w;
  return replaceIn(w, r1, STEP3);
}

function step4(w: string, r2: number): string {
  const suffix = STEP4.find((s) => w.endsWith(s));
  if (suffix === undefined) return w;
  const start = w.length - suffix.length;
  if (start < r2) return w;
  if (suffix === 'ion' && w[start - 1] !== 's' && w[start - 1] !== 't') return w;
  return w.slice(0, start);
}

function step5(w: string, r1: number, r2: number): string {
  const start = w.length - 1;
  if (w.endsWith('e') && (start >= r2 || (start >= r1 && !endsShort(w, start)))) {
    return w.slice(0, start);
  }
  if (w.endsWith('ll') && start >= r2) return w.slice(0, start);
  return w;
}

function regionsOf(w: string): [number, number] {
  const prefix = SPECIAL_PREFIXES.find((p) => w.startsWith(p));
  const r1 = prefix === undefined ? regionAfter(w, 0) : prefix.length;
  return [r1, regionAfter(w, r1)];
}

/** Returns the Porter2 stem of a lower-case word. */
export function stemEnglish(word: string): string {
  if (word.length <= 2) return word;
  const exception = EXCEPTIONS.get(word);
  if (exception !== undefined) return exception;
  let w = word.startsWith("'") ? word.slice(1) : word;
  if (w.includes('y')) w = markY(w);
  const [r1, r2] = regionsOf(w);
  if (w.includes("'")) w = w.replace(APOSTROPHE_S, '');
  w = step1a(w);
  if (AFTER_STEP1A.has(w)) return w;
  w = step1b(w, r1);
  w = step1c(w);
  w = replaceIn(w, r1, STEP2);
  w = step3(w, r1, r2);
  w = step4(w, r2);
  w = step5(w, r1, r2);
  return w.replaceAll('Y', 'y');
}
