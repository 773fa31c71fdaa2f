/**
 * @module core/builtin/matching/compound-splitter
 * Splits a German compound into words of the vocabulary: `anfragelimit` → `anfrage` +
 * `limit`, `sitzungsdauer` → `sitzungs` (stem `sitzung`) + `dauer`, up to three parts of
 * at least three letters each. The longest known head is tried first, as it is the more
 * specific reading.
 */

export const MIN_PART = 3;
const MAX_PARTS = 3;

/** Looks up one candidate part; `undefined` when it is not a vocabulary word. */
export type PartLookup = (part: string) => number[] | undefined;

export interface CompoundSplitter {
  /** The concepts of each part, or `undefined` when the word is no known compound. */
  split(word: string): number[][] | undefined;
}

/**
 * `starts`: the first three letters of every vocabulary form. A part must begin like some
 * form (its stem is a prefix of it), which rules out most cuts without stemming them.
 */
export function createCompoundSplitter(
  lookup: PartLookup,
  starts: ReadonlySet<string>,
): CompoundSplitter {
  const part = (word: string): number[] | undefined =>
    word.length >= MIN_PART && starts.has(word.slice(0, MIN_PART)) ? lookup(word) : undefined;

  const split = (word: string, partsLeft: number): number[][] | undefined => {
    if (!starts.has(word.slice(0, MIN_PART))) return undefined;
    for (let cut = word.length - MIN_PART; cut >= MIN_PART; cut--) {
      const head = lookup(word.slice(0, cut));
      if (head === undefined) continue;
      const rest = word.slice(cut);
      const tail = part(rest);
      if (tail !== undefined) return [head, tail];
      const more = partsLeft > 2 ? split(rest, partsLeft - 1) : undefined;
      if (more !== undefined) return [head, ...more];
    }
    return undefined;
  };

  return {
    split: (word) => (word.length >= 2 * MIN_PART ? split(word, MAX_PARTS) : undefined),
  };
}
