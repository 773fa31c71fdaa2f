/**
 * @module util/code-points
 * Characters as users count them: code points, not UTF-16 units, so an emoji is one.
 */

/** The code points in `text`, counted up to `max + 1` at most (enough to tell "over max"). */
export function codePointLength(text: string, max = Number.POSITIVE_INFINITY): number {
  let count = 0;
  for (const _ of text) {
    count++;
    if (count > max) break;
  }
  return count;
}

/** Whether `text` has more than `max` code points; a string of `max` UTF-16 units never has. */
export function hasMoreCodePointsThan(text: string, max: number): boolean {
  return text.length > max && codePointLength(text, max) > max;
}
