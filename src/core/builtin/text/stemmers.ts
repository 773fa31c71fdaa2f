/**
 * @module core/builtin/text/stemmers
 * The Snowball German and English stemmers (https://snowballstem.org), as generated for
 * NLP.js (`@nlpjs/lang-de`, `@nlpjs/lang-en-min`): maintained, small, no further
 * dependencies than `@nlpjs/core`'s base class. Input is one lower-case word; umlauts may
 * already be folded (`ä` → `a`), which the German algorithm tolerates because it folds
 * them itself at the end.
 *
 * The packages' own `stemWord` keeps every word it has seen in an unbounded cache; user
 * input must not grow memory, so the algorithm is called directly (`innerStem`) and
 * callers cache with a bound (see `matching/term-resolver.ts`).
 */
import { createRequire } from 'node:module';

interface SnowballStemmer {
  setCurrent(word: string): void;
  innerStem(): unknown;
  getCurrent(): string;
}
type StemmerClass = new () => SnowballStemmer;

// CommonJS modules without type declarations: loaded by path, typed by the interface above.
const require = createRequire(import.meta.url);
const StemmerDe = require('@nlpjs/lang-de/src/stemmer-de.js') as StemmerClass;
const StemmerEn = require('@nlpjs/lang-en-min/src/stemmer-en.js') as StemmerClass;

function stemmerOf(Stemmer: StemmerClass): (word: string) => string {
  const stemmer = new Stemmer();
  return (word) => {
    stemmer.setCurrent(word);
    stemmer.innerStem();
    return stemmer.getCurrent();
  };
}

/** The Snowball German stem of a lower-case word (`anfragen` → `anfrag`). */
export const stemGerman: (word: string) => string = stemmerOf(StemmerDe);
/** The Snowball English stem of a lower-case word (`requests` → `request`). */
export const stemEnglish: (word: string) => string = stemmerOf(StemmerEn);
