/**
 * @module core/builtin/text/edit-distance
 * Bounded Damerau-Levenshtein distance (optimal string alignment: insertions, deletions,
 * substitutions and transpositions of neighbours). It gives up as soon as the bound is
 * exceeded, which keeps typo search cheap.
 */

const MAX_LENGTH = 64;
// Three reusable rows: the search runs many times per message, allocation would dominate.
let before = new Int32Array(MAX_LENGTH + 1);
let previous = new Int32Array(MAX_LENGTH + 1);
let current = new Int32Array(MAX_LENGTH + 1);

/** Returns the distance between `a` and `b`, or `max + 1` when it is larger than `max`. */
export function boundedEditDistance(a: string, b: string, max: number): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (n > MAX_LENGTH || m > MAX_LENGTH) return a === b ? 0 : max + 1;
  for (let j = 0; j <= m; j++) previous[j] = j;
  for (let i = 1; i <= n; i++) {
    current[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const cb = b.charCodeAt(j - 1);
      const cost = ca === cb ? 0 : 1;
      let d = Math.min(
        (previous[j] ?? 0) + 1,
        (current[j - 1] ?? 0) + 1,
        (previous[j - 1] ?? 0) + cost,
      );
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) {
        d = Math.min(d, (before[j - 2] ?? 0) + 1);
      }
      current[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    const spare = before;
    before = previous;
    previous = current;
    current = spare;
  }
  const result = previous[m] ?? 0;
  return result > max ? max + 1 : result;
}
