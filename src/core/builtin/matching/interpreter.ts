/**
 * @module core/builtin/matching/interpreter
 * Finds the knowledge entry a message asks about, taking the conversation into account.
 *
 * Follow-up resolution is general, not a list of special cases: a message may be read
 * together with the query of the previous turn (its words carried over at `CARRY_WEIGHT`,
 * so they can complete but not outweigh the new message). The combined reading is used
 * - when the message opens like a follow-up ("und ...", "and ...", "what about ...") and
 *   the combined reading is confident, or
 * - when the message alone is not confident but the combined reading is, or
 * - to break a tie between equally good entries for the message alone.
 * The chosen entry must always match a word of the new message itself.
 */
import type { Match, Matcher, QueryUnit } from './matcher.js';
import type { TermPart, TermResolver } from './term-resolver.js';

export interface Interpretation {
  /** The query that was used (the message's own units, possibly plus carried-over ones). */
  readonly units: readonly QueryUnit[];
  /** The chosen entry, when its confidence reaches the threshold. */
  readonly best: Match | undefined;
  /** The scored entries of the chosen reading, best first (for "did you mean"). */
  readonly candidates: readonly Match[];
}

export const CARRY_WEIGHT = 0.6;
const MIN_CARRIED_WEIGHT = 0.2;
const TIE = 1e-9;

const CUES: ReadonlyArray<readonly string[]> = [
  ['und'],
  ['and'],
  ['aber'],
  ['but'],
  ['auch'],
  ['also'],
  ['what', 'about'],
  ['how', 'about'],
  ['what', 'if'],
  ['was', 'ist', 'mit'],
  ['wie', 'ist', 'es', 'mit'],
  ['wie', 'ist', 'das', 'mit'],
  ['wie', 'sieht', 'es', 'mit'],
  ['und', 'wenn'],
  ['same', 'for'],
  ['gilt', 'das', 'auch'],
];

/** Whether the message opens like a follow-up question. */
export function opensLikeFollowUp(tokens: readonly string[]): boolean {
  return CUES.some((cue) => cue.every((word, i) => tokens[i] === word));
}

export interface Interpreter {
  /** Reads `tokens` (a message without its small talk) after the query of the previous turn. */
  interpret(tokens: readonly string[], previous: readonly QueryUnit[]): Interpretation;
}

/**
 * The message's units plus the previous query's, weakened. A carried word is dropped when
 * the message repeats it, and when the message names an alternative to it ("Und im
 * Standard-Plan?" after a question about Plus replaces `plus` by `standard`).
 */
function carryOver(
  own: readonly QueryUnit[],
  previous: readonly QueryUnit[],
  alternatives: ReadonlyMap<number, ReadonlySet<number>>,
): QueryUnit[] {
  const ownConcepts = new Set(own.flatMap((unit) => unit.concepts));
  const replaced = (concept: number) =>
    ownConcepts.has(concept) || [...ownConcepts].some((o) => alternatives.get(o)?.has(concept));
  const carried = previous
    .filter((unit) => unit.concepts.length > 0 && !unit.concepts.some(replaced))
    .map((unit) => ({ ...unit, weight: unit.weight * CARRY_WEIGHT }))
    .filter((unit) => unit.weight >= MIN_CARRIED_WEIGHT);
  return [...own, ...carried];
}

function matchesOwn(match: Match, own: readonly QueryUnit[]): boolean {
  return own.some((unit) => unit.concepts.some((c) => match.entry.concepts.has(c)));
}

export function createInterpreter(
  alternatives: ReadonlyMap<number, ReadonlySet<number>>,
  resolver: TermResolver,
  matcher: Matcher,
  threshold: number,
): Interpreter {
  /** The joined reading of two tokens, when it says more than the two tokens apart. */
  const joinedPair = (first: string, second: string | undefined): TermPart | undefined => {
    if (second === undefined) return undefined;
    const pair = resolver.joined(first, second);
    if (pair === undefined) return undefined;
    const apart = [first, second].flatMap((token) =>
      (resolver.resolve(token) ?? []).flatMap((p) => p.concepts),
    );
    return pair.concepts.every((concept) => apart.includes(concept)) ? undefined : pair;
  };

  const unitsOf = (tokens: readonly string[]): QueryUnit[] => {
    const units: QueryUnit[] = [];
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i] as string;
      const pair = joinedPair(token, tokens[i + 1]);
      if (pair !== undefined) i += 1;
      for (const part of pair === undefined ? (resolver.resolve(token) ?? []) : [pair]) {
        units.push({ concepts: part.concepts, certainty: part.certainty, weight: 1 });
      }
    }
    return units;
  };

  const reading = (units: readonly QueryUnit[]): Interpretation => {
    const candidates = matcher.score(units);
    const top = candidates[0];
    return { units, candidates, best: top && top.confidence >= threshold ? top : undefined };
  };

  return {
    interpret(tokens, previous) {
      const own = unitsOf(tokens);
      const alone = reading(own);
      const hasOwnConcept = own.some((unit) => unit.concepts.length > 0);
      if (previous.length === 0 || !hasOwnConcept) return alone;
      const combined = reading(carryOver(own, previous, alternatives));
      const usable = combined.best !== undefined && matchesOwn(combined.best, own);
      if (usable && (opensLikeFollowUp(tokens) || alone.best === undefined)) return combined;
      if (alone.best === undefined) return alone;
      return breakTie(alone, combined);
    },
  };
}

/** When several entries tie for the message alone, the earlier turn decides between them. */
function breakTie(alone: Interpretation, combined: Interpretation): Interpretation {
  const top = alone.candidates[0];
  if (top === undefined) return alone;
  const tied = new Set(
    alone.candidates
      .filter((c) => top.confidence - c.confidence < TIE)
      .map((c) => c.entry.position),
  );
  if (tied.size < 2) return alone;
  const pick = combined.candidates.find((c) => tied.has(c.entry.position));
  const chosen = alone.candidates.find((c) => c.entry.position === pick?.entry.position);
  return chosen === undefined ? alone : { ...alone, best: chosen };
}
