/**
 * @module core/builtin/matching/interpreter
 * Finds the knowledge entry a question asks about, taking the conversation into account,
 * and decides what to do with the result: answer, ask which of two entries is meant, or
 * admit not knowing.
 *
 * Follow-up resolution is a re-query, not a list of special cases: the dialogue state gives
 * the query of the previous question, whose words are carried over at `CARRY_WEIGHT` (so
 * they complete but do not outweigh the new message), and the entries answered last (the
 * topic). The combined reading is used
 * - when the message opens like a follow-up ("und ...", "and ...", "what about ...") or
 *   is short, and the combined reading is confident, or
 * - when the message alone is not confident but the combined reading is, or
 * - to break a tie between equally good entries for the message alone.
 * The chosen entry must always match a word of the new message itself.
 *
 * Decision (knowledge/README.md, "Threshold"): the best entry answers when its confidence
 * reaches the threshold and the second is not `CLOSE` to it; two close entries make a
 * clarifying question; below the threshold, nothing fits.
 */
import {
  ATTRIBUTE_IN_ANSWER,
  ATTRIBUTE_WORDS,
  type Attribute,
  attributeNamed,
} from '../knowledge/answer-attributes.js';
import { formsOf, type IndexedEntry, type KnowledgeIndex } from '../knowledge/knowledge-index.js';
import { isEnglishWord } from '../text/english-words.js';
import { tokenize } from '../text/tokenize.js';
import { type Match, type Matcher, type QueryUnit, UNKNOWN_WORD_WEIGHT } from './matcher.js';
import { SEPARABLE_PARTICLES, type TermPart, type TermResolver } from './term-resolver.js';

type Outcome =
  | { readonly kind: 'answer'; readonly match: Match }
  | { readonly kind: 'clarify'; readonly options: readonly [Match, Match] }
  | { readonly kind: 'none' };

export interface Interpretation {
  /** The query that was used (the message's own units, possibly plus carried-over ones). */
  readonly units: readonly QueryUnit[];
  /** The message's own units. */
  readonly own: readonly QueryUnit[];
  /** The scored entries of the chosen reading, best first (for "did you mean"). */
  readonly candidates: readonly Match[];
  readonly outcome: Outcome;
  /** Whether the reading used the conversation. */
  readonly followUp: boolean;
}

/** What the conversation so far contributes to reading a message. */
export interface ReadingContext {
  /** The query of the previous question, if any. */
  readonly previous: readonly QueryUnit[];
  /** The entries answered last, most recent first. */
  readonly topics: readonly IndexedEntry[];
}

export const EMPTY_CONTEXT: ReadingContext = { previous: [], topics: [] };

const CARRY_WEIGHT = 0.6;
const MIN_CARRIED_WEIGHT = 0.2;
const TIE = 1e-9;
/** Two entries are close when the second reaches this share of the first: ask which. */
const CLOSE = 0.99;
/** Words that point back to the topic: "can I delete *one*?", "kann man *die* ändern?". */
const ANAPHORA = new Set(
  'it its that this one ones them they those there es das die der den dem sie ihn ihm ihr dies diese dieser dafur damit davon dabei dann'.split(
    ' ',
  ),
);

/** Function words of English and of German: which language a clause is written in. */
const ENGLISH_MARKERS = new Set(
  'the a an is are do does did how what when where why which my your i you it to of for can'.split(
    ' ',
  ),
);
const GERMAN_MARKERS = new Set(
  'der die das ein eine ist sind wie was wann wo warum ich du mein dein es zu von fur kann und'.split(
    ' ',
  ),
);

/** More English function words than German ones: the dictionary of English applies. */
function looksEnglish(tokens: readonly string[]): boolean {
  let balance = 0;
  for (const token of tokens) {
    if (ENGLISH_MARKERS.has(token)) balance += 1;
    else if (GERMAN_MARKERS.has(token)) balance -= 1;
  }
  return balance > 0;
}

/**
 * An English word of this length or longer that the dictionary knows and the knowledge base
 * does not ("bowl", "rain", "president") says the question is about something else.
 */
const REAL_WORD = 4;

/** A word the knowledge base does not know, in a complaint: "keeps throwing", "seit heute morgen". */
const VENTING_WEIGHT = 0.2;

/** "The other one", "den anderen": the alternative to the word of the previous question. */
const OTHER = new Set('other others andere anderen anderer anderes andern anderem'.split(' '));

/** A follow-up of at most this many words that are not stop words is short. */
const SHORT_QUESTION = 4;
/** Below this (confidence plus closeness to the topic), no entry gives the attribute asked. */
const MIN_ATTRIBUTE_SCORE = 0.2;

function attributeAsked(
  tokens: readonly string[],
  ignored: ReadonlySet<string>,
): Attribute | undefined {
  const content = tokens.filter((token) => !ignored.has(token));
  if (content.length === 0 || content.length > SHORT_QUESTION) return undefined;
  for (const attribute of Object.keys(ATTRIBUTE_WORDS) as Attribute[]) {
    const words = ATTRIBUTE_WORDS[attribute];
    if (tokens.some((token) => words.has(token))) return attribute;
  }
  return undefined;
}

/** A question asking an attribute must name this many known words to prefer an entry. */
const MIN_ATTRIBUTE_TOPIC = 2;
/** A candidate that gives the attribute asked may come first from this share of the best. */
const ATTRIBUTE_MARGIN = 0.7;

/**
 * "Wie lange merkt ihr euch einen Chatverlauf?": of entries close to each other, the one whose
 * answer gives what is asked (a duration, a price) comes first, at the best one's confidence,
 * and the best one steps back to the margin (no clarifying question between them).
 */
function preferGiving(candidates: Match[], gives: readonly boolean[]): Match[] {
  const top = candidates[0];
  if (top === undefined || gives[top.entry.position]) return candidates;
  const giving = candidates.find(
    (match) => gives[match.entry.position] && match.confidence >= top.confidence * ATTRIBUTE_MARGIN,
  );
  if (giving === undefined) return candidates;
  const first = Object.assign({}, giving, { confidence: top.confidence, rank: top.rank });
  const stepped = Object.assign({}, top, {
    confidence: top.confidence * ATTRIBUTE_MARGIN * ATTRIBUTE_MARGIN,
    rank: top.rank * ATTRIBUTE_MARGIN * ATTRIBUTE_MARGIN,
  });
  const rest = candidates.filter((match) => match !== top && match !== giving);
  return [first, ...rest, stepped].sort((a, b) => b.rank - a.rank);
}

/** Per attribute and entry: whether the entry's answer gives it (in either language). */
function attributeTable(index: KnowledgeIndex): Record<Attribute, boolean[]> {
  const gives = (pattern: RegExp) =>
    index.entries.map((entry) =>
      (['de', 'en'] as const).some((language) => {
        const plan = entry.planBound ? index.facts.plans[0] : undefined;
        return pattern.test(entry.answer(language, plan));
      }),
    );
  return { duration: gives(ATTRIBUTE_IN_ANSWER.duration), cost: gives(ATTRIBUTE_IN_ANSWER.cost) };
}

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
function opensLikeFollowUp(tokens: readonly string[]): boolean {
  return CUES.some((cue) => cue.every((word, i) => tokens[i] === word));
}

/**
 * The conversation after `reading` answered: its words, plus the older ones it did not
 * repeat, weakened once more (so "Was ist eine Session?" → "Wie viele Nachrichten merkt
 * sie sich?" → "Und kann ich sie löschen?" still knows it is about sessions).
 */
export function contextAfter(
  reading: Interpretation,
  before: ReadingContext,
  entry: IndexedEntry,
): ReadingContext {
  const seen = new Set(reading.units.flatMap((unit) => unit.concepts));
  const older = weakened(before.previous, seen);
  return { previous: [...reading.units, ...older], topics: [entry, ...before.topics.slice(0, 1)] };
}

/** The units naming none of the concepts `dropped`, weakened once more; too weak ones go. */
function weakened(units: readonly QueryUnit[], dropped: ReadonlySet<number>): QueryUnit[] {
  const kept: QueryUnit[] = [];
  for (const unit of units) {
    const weight = unit.weight * CARRY_WEIGHT;
    if (weight < MIN_CARRIED_WEIGHT || unit.concepts.length === 0) continue;
    if (unit.concepts.some((concept) => dropped.has(concept))) continue;
    kept.push(Object.assign({}, unit, { weight }));
  }
  return kept;
}

/**
 * A clause as it reads on its own, whatever the conversation: its units and its reading
 * alone. Made once per clause, then read in the light of each conversation it comes up in
 * (see `message-reader.ts`: an earlier message is read again on every request).
 */
export interface ParsedClause {
  readonly tokens: readonly string[];
  /** The clause's units (tokens without small talk). */
  readonly own: readonly QueryUnit[];
  /** How many of them name a concept of the knowledge base. */
  readonly known: number;
  /** The clause read without a conversation (`interpret(clause, EMPTY_CONTEXT)`). */
  readonly alone: Interpretation;
  /** The attribute its words name (with enough known words to name a topic too). */
  readonly named: Attribute | undefined;
  /** The attribute a short follow-up asks of the topic ("und wie lange?"). */
  readonly asked: Attribute | undefined;
}

export interface Interpreter {
  /**
   * What the clause `tokens` says on its own; in a complaint (`upset`), the words the
   * knowledge base does not know are the venting around the question and weigh less.
   */
  parse(tokens: readonly string[], upset?: boolean): ParsedClause;
  /** Reads a parsed clause in the light of the conversation. */
  interpret(clause: ParsedClause, context: ReadingContext): Interpretation;
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
  const replaced = new Set(own.flatMap((unit) => unit.concepts));
  for (const concept of [...replaced]) {
    for (const alternative of alternatives.get(concept) ?? []) replaced.add(alternative);
  }
  return [...own, ...weakened(previous, replaced)];
}

function matchesOwn(match: Match, own: readonly QueryUnit[], index: KnowledgeIndex): boolean {
  const { concepts, exampleConcepts, position } = match.entry;
  return own.some(
    (unit) =>
      unit.concepts.some((c) => concepts.has(c) || exampleConcepts.has(c)) ||
      (unit.answer ?? []).some((word) => index.answerPostings[word]?.includes(position)),
  );
}

function decide(candidates: readonly Match[], threshold: number): Outcome {
  const top = candidates[0];
  if (top === undefined || top.confidence < threshold) return { kind: 'none' };
  const second = candidates[1];
  if (second !== undefined && second.confidence >= top.confidence * CLOSE) {
    return { kind: 'clarify', options: [top, second] };
  }
  return { kind: 'answer', match: top };
}

/** Per pair of entries: the IDF weight of their shared concepts / the second's total weight. */
function affinities(index: KnowledgeIndex): Float64Array[] {
  const weight = (concepts: Iterable<number>) => {
    let sum = 0;
    for (const concept of concepts) sum += index.idf[concept] ?? 0;
    return sum;
  };
  return index.entries.map((topic) =>
    Float64Array.from(index.entries, (entry) => {
      // The topic itself: "Kann man die ändern?" after the time zone asks about the time zone.
      if (entry === topic) return 1;
      const shared = [...entry.concepts].filter((concept) => topic.concepts.has(concept));
      const total = weight(entry.concepts);
      return total > 0 ? weight(shared) / total : 0;
    }),
  );
}

export function createInterpreter(
  index: KnowledgeIndex,
  resolver: TermResolver,
  matcher: Matcher,
  threshold: number,
): Interpreter {
  const related = affinities(index);
  const answerWords = index.entries.map(
    (entry) =>
      new Set(
        [entry.answer('de'), entry.answer('en')].flatMap((text) => tokenize(text).flatMap(formsOf)),
      ),
  );

  const attributes = attributeTable(index);

  /** The joined reading of two tokens, when it says more than the two tokens apart. */
  const joinedPair = (first: string, second: string | undefined): TermPart | undefined => {
    if (second === undefined || index.ignored.has(first) || index.ignored.has(second)) {
      return undefined;
    }
    const pair = resolver.joined(first, second);
    if (pair === undefined) return undefined;
    const apart = [first, second].flatMap((token) =>
      (resolver.resolve(token) ?? []).flatMap((p) => p.concepts),
    );
    return pair.concepts.every((concept) => apart.includes(concept)) ? undefined : pair;
  };

  /**
   * A German separable verb split over the clause ("Wann setzt sich der Zähler zurück?"):
   * the verb with its particle in front, when that is a word of the knowledge base.
   */
  const joinParticle = (tokens: readonly string[]): readonly string[] => {
    const particle = tokens.at(-1);
    if (particle === undefined || !SEPARABLE_PARTICLES.has(particle)) return tokens;
    for (let i = 0; i < tokens.length - 1; i++) {
      const verb = tokens[i];
      if (verb === undefined || index.ignored.has(verb) || verb.length < 3) continue;
      const joined = resolver.resolve(particle + verb);
      if (joined?.some((part) => part.concepts.length > 0 && part.certainty === 1)) {
        return [...tokens.slice(0, i), particle + verb, ...tokens.slice(i + 1, -1)];
      }
    }
    return tokens;
  };

  const unitsOf = (clause: readonly string[]): QueryUnit[] => {
    const units: QueryUnit[] = [];
    const tokens = joinParticle(clause);
    const english = looksEnglish(clause);
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i];
      if (token === undefined) break;
      const pair = joinedPair(token, tokens[i + 1]);
      if (pair !== undefined) i += 1;
      const first = units.length;
      for (let part of pair === undefined ? (resolver.resolve(token) ?? []) : [pair]) {
        if (english && part.concepts.length === 0) part = resolver.shortTypo(token) ?? part;
        if (
          part.concepts.length === 0 &&
          english &&
          token.length >= REAL_WORD &&
          isEnglishWord(token)
        ) {
          // "president", "upload": a real word the knowledge base does not know.
          units.push({ concepts: [], certainty: 1, weight: 1, unknownWeight: UNKNOWN_WORD_WEIGHT });
        } else units.push({ concepts: part.concepts, certainty: part.certainty, weight: 1 });
      }
      // The word as the answers have it, once per token (a compound's first part carries it).
      const answer = pair === undefined ? resolver.answerWords(token) : [];
      const unit = units[first];
      if (answer.length > 0 && unit !== undefined)
        units[first] = Object.assign({}, unit, { answer });
    }
    return units;
  };

  // Example questions and topics are read the way questions are, so that both meet in the
  // same concepts.
  const conceptsOf = (text: string) =>
    Int32Array.from(new Set(unitsOf(tokenize(text)).flatMap((unit) => unit.concepts)));
  matcher.useFields(
    index.entries.map(({ entry }) => entry.examples.map((example) => conceptsOf(example.text))),
    index.entries.map(({ entry }) => conceptsOf(`${entry.topic.de} ${entry.topic.en}`)),
  );

  const reading = (
    units: readonly QueryUnit[],
    own: readonly QueryUnit[],
    topics: readonly IndexedEntry[],
    asked?: Attribute,
  ): Interpretation => {
    let candidates = matcher.score(units).filter((match) => matchesOwn(match, own, index));
    const topic = topics[0];
    if (asked !== undefined) candidates = preferGiving(candidates, attributes[asked]);
    return {
      units,
      own,
      candidates,
      outcome: decide(candidates, threshold),
      followUp: topic !== undefined || units.length > own.length,
    };
  };

  /**
   * A follow-up no entry fits, whose words are in the answer just given ("Und wen rufe ich
   * an, wenn es eilt?" after "... Eilt es, ruf die Hotline an."): that answer again.
   */
  const topicAgain = (
    tokens: readonly string[],
    context: ReadingContext,
    alone: Interpretation,
  ): Interpretation | undefined => {
    const topic = context.topics[0];
    const content = tokens.filter((token) => !index.ignored.has(token)).length;
    if (topic === undefined || !(opensLikeFollowUp(tokens) || content <= SHORT_QUESTION)) {
      return undefined;
    }
    const words = answerWords[topic.position] as ReadonlySet<string>;
    const hit = tokens.some(
      (token) =>
        token.length >= 3 &&
        !index.ignored.has(token) &&
        formsOf(token).some((form) => words.has(form)),
    );
    if (!hit) return undefined;
    const match = topicMatch(topic, threshold);
    return Object.assign({}, alone, {
      outcome: { kind: 'answer' as const, match },
      followUp: true,
    });
  };

  /**
   * "What about the other one?" after a question about Plus: the words of the message
   * without "other", and in their place the alternatives to the word of the previous
   * question (`alternatives:`, and the configured plans).
   */
  const otherAlternative = (
    tokens: readonly string[],
    context: ReadingContext,
  ): { own: QueryUnit[] } | undefined => {
    if (!tokens.some((token) => OTHER.has(token))) return undefined;
    for (const unit of context.previous) {
      for (const concept of unit.concepts) {
        const others = index.alternatives.get(concept);
        if (others === undefined || others.size === 0) continue;
        const rest = unitsOf(tokens.filter((token) => !OTHER.has(token)));
        const swapped: QueryUnit = { concepts: [...others], certainty: 1, weight: 1 };
        return { own: [...rest, swapped] };
      }
    }
    return undefined;
  };

  /**
   * A short follow-up that asks for an attribute ("und wie lange?", "how much does that
   * cost?") is answered by the entry whose answer gives that attribute: the topic itself, or
   * the entry closest to it.
   */
  const withAttribute = (
    attribute: Attribute,
    combined: Interpretation,
    context: ReadingContext,
  ): Interpretation | undefined => {
    const topic = context.topics[0];
    if (topic === undefined) return undefined;
    const gives = attributes[attribute];
    // "and how long until I get the money?": the message names its own topic, which gives it.
    if (combined.outcome.kind === 'answer' && gives[combined.outcome.match.entry.position]) {
      return combined;
    }
    const closeness = related[topic.position] as Float64Array;
    let best: Match | undefined;
    let bestScore = 0;
    for (const entry of index.entries) {
      if (!gives[entry.position]) continue;
      const scored = combined.candidates.find((match) => match.entry === entry);
      const score = (scored?.confidence ?? 0) + (closeness[entry.position] ?? 0);
      if (score > bestScore) {
        bestScore = score;
        best = scored ?? {
          entry,
          confidence: threshold,
          coverage: 1,
          words: 1,
          evidence: 1,
          rank: threshold,
        };
      }
    }
    if (best === undefined || bestScore < MIN_ATTRIBUTE_SCORE) return undefined;
    const match = Object.assign({}, best, { confidence: Math.max(best.confidence, threshold) });
    return Object.assign({}, combined, {
      outcome: { kind: 'answer' as const, match },
      followUp: true,
    });
  };

  /**
   * A follow-up that only swaps a word of the previous question for one of its alternatives,
   * where the answer just given names that alternative too: the same answer.
   */
  const alternativeInTopic = (
    tokens: readonly string[],
    ownUnits: readonly QueryUnit[],
    context: ReadingContext,
    combined: Interpretation,
  ): Interpretation | undefined => {
    const topic = context.topics[0];
    if (topic === undefined) return undefined;
    const carried = new Set(context.previous.flatMap((unit) => unit.concepts));
    const known = ownUnits.filter((unit) => unit.concepts.length > 0);
    const swaps = known.every((unit) =>
      unit.concepts.some((concept) =>
        [...(index.alternatives.get(concept) ?? [])].some((other) => carried.has(other)),
      ),
    );
    if (known.length === 0 || !swaps) return undefined;
    const words = answerWords[topic.position] as ReadonlySet<string>;
    const named = tokens.some(
      (token) =>
        !index.ignored.has(token) &&
        index.alternatives.has(index.forms.get(token) ?? -1) &&
        formsOf(token).some((form) => words.has(form)),
    );
    if (!named) return undefined;
    const match = topicMatch(topic, threshold);
    return Object.assign({}, combined, { outcome: { kind: 'answer' as const, match } });
  };

  return {
    parse(tokens, upset = false) {
      const own = upset
        ? unitsOf(tokens).map((unit) =>
            unit.concepts.length === 0
              ? Object.assign({}, unit, { unknownWeight: VENTING_WEIGHT })
              : unit,
          )
        : unitsOf(tokens);
      const known = own.filter((unit) => unit.concepts.length > 0).length;
      // "Und wie lange?" alone names no topic whose duration it could ask.
      const named = known >= MIN_ATTRIBUTE_TOPIC ? attributeNamed(tokens) : undefined;
      const asked = attributeAsked(tokens, index.ignored);
      return { tokens, own, known, alone: reading(own, own, [], named), named, asked };
    },
    interpret({ tokens, own, known, alone, named, asked }, context) {
      if (context.previous.length === 0 && context.topics.length === 0) return alone;
      if (known === 0) {
        // "how long does it take?" after a question about ordering a laptop.
        const byAttribute = asked === undefined ? undefined : withAttribute(asked, alone, context);
        // "what server do I use?" after the VPN: words only the answer just given has.
        return byAttribute ?? topicAgain(tokens, context, alone) ?? alone;
      }
      const other = otherAlternative(tokens, context);
      const ownUnits = other?.own ?? own;
      const combined = reading(
        carryOver(ownUnits, context.previous, index.alternatives),
        ownUnits,
        context.topics,
        named,
      );
      if (asked !== undefined) {
        const byAttribute = withAttribute(asked, combined, context);
        if (byAttribute !== undefined) return byAttribute;
      }
      if (other !== undefined && combined.outcome.kind === 'answer') return combined;
      const confident = combined.outcome.kind === 'answer';
      const elliptical =
        opensLikeFollowUp(tokens) || (known <= 2 && tokens.some((token) => ANAPHORA.has(token)));
      // "Und in die Schweiz?" after the delivery time to Germany: the same topic for the
      // alternative, when the answer just given covers it too.
      if (elliptical) {
        const same = alternativeInTopic(tokens, ownUnits, context, combined);
        if (same !== undefined) return same;
      }
      if (confident && (elliptical || alone.outcome.kind !== 'answer')) return combined;
      if (alone.outcome.kind !== 'answer') {
        const again = topicAgain(tokens, context, alone);
        return again ?? alone;
      }
      return breakTie(alone, combined);
    },
  };
}

/** When several entries tie for the message alone, the conversation decides between them. */
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
  return chosen === undefined
    ? alone
    : Object.assign({}, alone, { outcome: { kind: 'answer' as const, match: chosen } });
}

/** The current topic taken as the answer of a follow-up, at the threshold's confidence. */
function topicMatch(topic: Match['entry'], threshold: number): Match {
  return {
    entry: topic,
    confidence: threshold,
    coverage: 1,
    words: 1,
    evidence: 1,
    rank: threshold,
  };
}
