/**
 * @module core/builtin/text/tokenize
 * Turns text into comparable tokens: lower case, accents and umlauts folded (`ä` → `a`,
 * `ß` → `ss`), English contractions expanded, digit groups joined (`1.000` → `1000`),
 * everything else that is not a letter, digit or underscore is a separator (so
 * `Plus-Plan` becomes two tokens, `message_missing` stays one).
 */

const MARKS = /\p{M}+/gu;
const QUOTES = /[’‘`´]/g;
const DIGIT_GROUPS = /(\d)[.,'’](?=\d{3}(?!\d))/g;
// Underscores stay inside tokens: identifiers such as `message_missing` or
// `PLAUDER_SESSION_TTL` are matched as a whole, not as their parts.
const WORDS = /[a-z0-9_]+(?:'[a-z]+)?/g;
const ONLY_UNDERSCORES = /^_+$/;

const CONTRACTIONS: ReadonlyMap<string, readonly string[]> = new Map([
  ["can't", ['can', 'not']],
  ["won't", ['will', 'not']],
  ["shan't", ['shall', 'not']],
  ["let's", ['let', 'us']],
]);
const SUFFIXES: ReadonlyMap<string, string> = new Map([
  ['m', 'am'],
  ['re', 'are'],
  ['ve', 'have'],
  ['ll', 'will'],
  ['d', 'would'],
  ['s', 'is'],
]);

/** Lower case, accents and umlauts removed, `ß` as `ss`; length may change. */
export function foldText(text: string): string {
  return text
    .toLowerCase()
    .replaceAll('ß', 'ss')
    .normalize('NFKD')
    .replace(MARKS, '')
    .replace(QUOTES, "'")
    .replace(DIGIT_GROUPS, '$1');
}

/** "401s", "500er", "429ern": a status code with a plural or German suffix. */
const NUMBER_SUFFIX = /^(\d+)(s|er|ern|ers)$/;

function pushExpanded(word: string, out: string[]): void {
  const numeral = NUMBER_SUFFIX.exec(word);
  if (numeral?.[1] !== undefined) {
    out.push(numeral[1]);
    return;
  }
  const apostrophe = word.indexOf("'");
  if (apostrophe < 0) {
    out.push(word);
    return;
  }
  const known = CONTRACTIONS.get(word);
  if (known !== undefined) {
    out.push(...known);
    return;
  }
  const base = word.slice(0, apostrophe);
  const suffix = word.slice(apostrophe + 1);
  if (suffix === 't' && base.endsWith('n')) {
    out.push(base.slice(0, -1), 'not');
    return;
  }
  out.push(base);
  const expanded = SUFFIXES.get(suffix);
  if (expanded !== undefined) out.push(expanded);
}

/**
 * Splits text into folded tokens. At most `limit` tokens are returned: chat questions are
 * short, and the cap bounds the work for very long messages.
 */
export function tokenize(text: string, limit = 120): string[] {
  const out: string[] = [];
  for (const match of foldText(text).matchAll(WORDS)) {
    if (ONLY_UNDERSCORES.test(match[0])) continue;
    pushExpanded(match[0], out);
    if (out.length >= limit) break;
  }
  return out.length > limit ? out.slice(0, limit) : out;
}

/** Whether a token is a number (numbers are matched exactly, never stemmed or corrected). */
export function isNumber(token: string): boolean {
  const c = token.charCodeAt(0);
  return c >= 48 && c <= 57;
}
