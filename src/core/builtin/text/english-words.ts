/**
 * @module core/builtin/text/english-words
 * Whether a token is an English word, from the Hunspell dictionary of the `dictionary-en`
 * package (SCOWL, MIT and BSD licences): its about 50 000 stems, each also with the common
 * inflections (`-s`, `-es`, `-ed`, `-ing`, `-er`, `-est`, `-ly`). Only the stems are kept
 * (no affix expansion): a set of short strings, read once when the module is loaded.
 * A short token that is no word ("kye", "limt") may then be a typo of a knowledge-base word,
 * while a real word ("bye", "eye") is left alone.
 */
import dictionary from 'dictionary-en';
import { foldText } from './tokenize.js';

const ASCII = /^[\x20-\x7e]*$/;

function readStems(dic: Uint8Array): Set<string> {
  const text = new TextDecoder('utf-8').decode(dic);
  const stems = new Set<string>();
  // The first line is the number of entries; each further line is `stem` or `stem/FLAGS`.
  for (const line of text.split('\n').slice(1)) {
    const slash = line.indexOf('/');
    const stem = (slash < 0 ? line : line.slice(0, slash)).trim();
    // Folding (accents) is costly and only needed for the few stems that are not ASCII.
    if (stem !== '') stems.add(ASCII.test(stem) ? stem.toLowerCase() : foldText(stem));
  }
  return stems;
}

const STEMS: ReadonlySet<string> = readStems(dictionary.dic);

/** How many stems the dictionary has (for tests). */
export const ENGLISH_STEM_COUNT = STEMS.size;

const SUFFIXES = ['s', 'es', 'ed', 'd', 'ing', 'er', 'est', 'ly', 'ies', 'ied'] as const;

/** Whether `token` (folded, lower case) is an English word or an inflection of one. */
export function isEnglishWord(token: string): boolean {
  if (STEMS.has(token)) return true;
  for (const suffix of SUFFIXES) {
    if (token.length <= suffix.length + 1 || !token.endsWith(suffix)) continue;
    const stem = token.slice(0, -suffix.length);
    if (STEMS.has(stem)) return true;
    // "tried" → "try", "stopped" → "stop", "making" → "make".
    if ((suffix === 'ies' || suffix === 'ied') && STEMS.has(`${stem}y`)) return true;
    if (stem.length >= 2 && stem.at(-1) === stem.at(-2) && STEMS.has(stem.slice(0, -1)))
      return true;
    if ((suffix === 'ing' || suffix === 'ed' || suffix === 'er') && STEMS.has(`${stem}e`))
      return true;
  }
  return false;
}
