/**
 * @module core/builtin/text/english-irregular
 * The base forms of irregular English verbs ("kept" → "keep", "ran" → "run"), from the list
 * of the `english-verbs-irregular` package: the Snowball stemmer removes endings only, so
 * "how long do you keep it?" and a keyword "kept" would otherwise never meet. The forms of
 * verbs mostly used as auxiliaries ("got leaked", "had", "did", "was") are left out: they
 * name no action of their own.
 */
import { createRequire } from 'node:module';

const AUXILIARIES = new Set(['be', 'have', 'do', 'get']);

const require = createRequire(import.meta.url);
const LIST: unknown = require('english-verbs-irregular/resources/irregularVerbs.json');

/** Each past and participle form of the list, with its verb's base form. */
function baseForms(list: unknown): ReadonlyMap<string, string> {
  const bases = new Map<string, string>();
  if (typeof list !== 'object' || list === null) return bases;
  for (const [base, variants] of Object.entries(list)) {
    if (AUXILIARIES.has(base) || !Array.isArray(variants)) continue;
    for (const form of variants.flat()) {
      // The first verb a form belongs to keeps it ("found" is "find", not "found").
      if (typeof form === 'string' && form !== base && !bases.has(form)) bases.set(form, base);
    }
  }
  return bases;
}

const BASE = baseForms(LIST);

/** The base form of an irregular English verb form, if `word` is one. */
export function englishBaseForm(word: string): string | undefined {
  return BASE.get(word);
}
