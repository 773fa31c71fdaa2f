/**
 * @module core/builtin/conversation/message-reader
 * Takes one message apart: a name statement, small talk, the tone, and the questions in
 * it, each read against the knowledge base in the light of the conversation. A message is
 * split into sentences, and a sentence into clauses where a conjunction starts a new
 * question ("How many requests do I get and when does the counter reset?"); a later
 * clause may lean on an earlier one ("Wie viele hat Standard, und wie viele Plus?").
 */
import type { KnowledgeIndex } from '../knowledge/knowledge-index.js';
import {
  contextAfter,
  type Interpretation,
  type Interpreter,
  type ParsedClause,
  type ReadingContext,
} from '../matching/interpreter.js';
import { BoundedCache } from '../text/bounded-cache.js';
import { tokenize } from '../text/tokenize.js';
import { splitSegments } from './segments.js';
import type { SmallTalkDetector, SmallTalkKind } from './small-talk.js';
import { detectTone } from './tone.js';
import type { NameReader, NameStatement } from './user-memory.js';

export interface ClauseReading {
  /** The clause is (part of) a sentence that asks something, or what such a sentence refers to. */
  question: boolean;
  readonly reading: Interpretation;
}

export interface MessageAnalysis {
  readonly statement: NameStatement | undefined;
  /** Small talk found anywhere in the message, in order. */
  readonly kinds: readonly SmallTalkKind[];
  /** Rude or frustrated. */
  readonly upset: boolean;
  /** The clauses that have content for the knowledge base, in order. */
  readonly clauses: readonly ClauseReading[];
  /** The conversation after this message: the last clause that found an entry. */
  readonly context: ReadingContext;
}

export interface ReaderParts {
  readonly index: KnowledgeIndex;
  readonly interpreter: Interpreter;
  readonly smallTalk: SmallTalkDetector;
  readonly names: NameReader;
  readonly parses: MessageParses;
}

/** Words that start a new question after "und" / "and" inside one sentence. */
const CLAUSE_STARTS = new Set(
  `wie was wann wo warum wieso welche welcher welches welchen wer kann konnen darf gibt ist sind
  laufen lauft zahlen zahlt muss how what when where why which who do does can could is are will`.split(
    /\s+/,
  ),
);
const CONJUNCTIONS = new Set(['und', 'and', 'sowie', 'also']);
/** Question words that start a new question after a comma: "..., when does it reset?". */
const QUESTION_STARTS = new Set(
  'wie was wann wo warum wieso weshalb wer how what when where why which who'.split(' '),
);
/** A clause of fewer words before the comma is no statement of its own ("Hi, wie ..."). */
const MIN_CLAUSE_BEFORE_COMMA = 3;

/**
 * Splits after "und"/"and" when a question word follows, at ", und" / ", and", and at a
 * comma followed by a question word.
 */
function splitClauses(tokens: readonly string[], commas: ReadonlySet<number>): string[][] {
  let current: string[] = [];
  const clauses: string[][] = [current];
  tokens.forEach((token, i) => {
    const next = tokens[i + 1];
    if (
      commas.has(i) &&
      QUESTION_STARTS.has(token) &&
      current.length >= MIN_CLAUSE_BEFORE_COMMA &&
      i < tokens.length - 1
    ) {
      current = [];
      clauses.push(current);
    }
    const newClause =
      CONJUNCTIONS.has(token) &&
      current.length >= 2 &&
      next !== undefined &&
      (CLAUSE_STARTS.has(next) || commas.has(i));
    if (newClause) {
      current = [];
      clauses.push(current);
    } else current.push(token);
  });
  return clauses.filter((clause) => clause.length > 0);
}

const NO_COMMAS: ReadonlySet<number> = new Set();

/** Positions of tokens that follow a comma (", und wie viele ..."). */
function commaPositions(text: string, limit: number): Set<number> {
  const positions = new Set<number>();
  const parts = text.split(',');
  let count = 0;
  parts.forEach((part, i) => {
    if (i > 0) positions.add(count);
    count += tokenize(part, limit).length;
  });
  return positions;
}

/**
 * The comma positions among `kept`, the tokens left after tone and small talk were taken
 * out of `tokens` (a comma before a word taken out goes to the next word kept).
 */
function keptCommas(
  tokens: readonly string[],
  kept: readonly string[],
  commas: ReadonlySet<number>,
): Set<number> {
  const positions = new Set<number>();
  let pending = false;
  let j = 0;
  for (let i = 0; i < tokens.length && j < kept.length; i++) {
    pending ||= commas.has(i);
    if (tokens[i] !== kept[j]) continue;
    if (pending) positions.add(j);
    pending = false;
    j += 1;
  }
  return positions;
}

function sameAnswer(reading: Interpretation, context: ReadingContext): boolean {
  return reading.outcome.kind === 'answer' && reading.outcome.match.entry === context.topics[0];
}

/** What a message says on its own: everything of its reading that the conversation does not change. */
export interface ParsedMessage {
  readonly statement: NameStatement | undefined;
  readonly kinds: readonly SmallTalkKind[];
  readonly upset: boolean;
  readonly segments: readonly ParsedSegment[];
}

interface ParsedSegment {
  readonly question: boolean;
  /** The segment holds small talk. */
  readonly talk: boolean;
  /** The clauses that may ask something: those with a known word, or a meaningful one. */
  readonly clauses: readonly ParsedClause[];
}

export interface ReadOptions {
  /** The previous reply asked for the user's name. */
  readonly askedForName: boolean;
  readonly maxTokens: number;
}

/**
 * Parses of messages, by message and read options. Each earlier message is read again on
 * every request of its session (the last three turns give the topic), and only the part that
 * depends on the conversation changes: the rest is kept. At most `limit` messages per
 * combination of options (there are four in use: two token budgets, asked for a name or not).
 */
export class MessageParses {
  private readonly byOptions = new Map<number, BoundedCache<string, ParsedMessage>>();
  constructor(private readonly limit: number) {}

  /** The parse of `message`, made by `parse` unless it is kept. */
  get(message: string, options: ReadOptions, parse: () => ParsedMessage): ParsedMessage {
    // Keyed by the message itself, not a string made from it: a message of a window kept in
    // memory is the same string on every request, and V8 keeps its hash.
    const slot = options.maxTokens * 2 + (options.askedForName ? 1 : 0);
    let cache = this.byOptions.get(slot);
    if (cache === undefined) {
      cache = new BoundedCache(this.limit);
      this.byOptions.set(slot, cache);
    }
    let parsed = cache.get(message);
    if (parsed === undefined) {
      parsed = parse();
      cache.set(message, parsed);
    }
    return parsed;
  }
}

/** Sentences, small talk, tone and clauses of a message, and each clause read on its own. */
function parseMessage(parts: ReaderParts, message: string, options: ReadOptions): ParsedMessage {
  const statement = parts.names.read(message, options.askedForName);
  // The statement is not part of the question: "Ich heiße Anna, was kostet das?".
  const text = statement
    ? `${message.slice(0, statement.start)} ${message.slice(statement.end)}`
    : message;
  const kinds: SmallTalkKind[] = [];
  const segments: ParsedSegment[] = [];
  let upset = false;
  let budget = options.maxTokens;
  for (const segment of splitSegments(text)) {
    if (budget <= 0) break;
    const tokens = tokenize(segment.text, budget);
    budget -= tokens.length;
    const tone = detectTone(tokens);
    upset ||= tone.upset;
    const talk = parts.smallTalk.detect(tone.rest);
    for (const kind of talk.kinds) if (!kinds.includes(kind)) kinds.push(kind);
    const commas = segment.text.includes(',')
      ? keptCommas(tokens, talk.rest, commaPositions(segment.text, tokens.length))
      : NO_COMMAS;
    const clauses: ParsedClause[] = [];
    for (const clause of splitClauses(talk.rest, commas)) {
      const parsed = parts.interpreter.parse(clause, tone.upset);
      // Unknown words next to small talk ("cheers mate") are no question.
      const meaningful = clause.some((token) => !parts.index.ignored.has(token));
      if (parsed.known === 0 && (!meaningful || talk.kinds.length > 0 || tone.upset)) continue;
      clauses.push(parsed);
    }
    segments.push({ question: segment.question, talk: talk.kinds.length > 0, clauses });
  }
  return { statement, kinds, upset, segments };
}

export function readMessage(
  parts: ReaderParts,
  message: string,
  context: ReadingContext,
  options: ReadOptions,
): MessageAnalysis {
  const parsed = parts.parses.get(message, options, () => parseMessage(parts, message, options));
  const clauses: ClauseReading[] = [];
  let current = context;
  for (const segment of parsed.segments) {
    let found = false;
    const before = clauses.at(-1);
    for (const clause of segment.clauses) {
      let reading = parts.interpreter.interpret(clause, current);
      // A later part of the same message asks something new, not the same again.
      if (current !== context && sameAnswer(reading, current)) {
        if (clause.alone.outcome.kind === 'answer') reading = clause.alone;
      }
      // Words next to small talk that fit nothing ("thank you so much") ask nothing.
      if (reading.outcome.kind === 'none' && segment.talk && !segment.question) continue;
      const first: ClauseReading = { question: segment.question, reading };
      clauses.push(first);
      found ||= reading.outcome.kind !== 'none';
      if (reading.outcome.kind === 'answer') {
        current = contextAfter(reading, current, reading.outcome.match.entry);
      } else if (reading.outcome.kind === 'clarify') {
        // "429 again. How long until I can use it?": a sentence that names a topic without
        // settling it still tells what the next question is about.
        current = { previous: reading.units, topics: current.topics };
      }
    }
    // "Bei mir kommt immer 401. Woran kann das liegen?": the question is about the sentence before.
    if (!found && segment.question && before !== undefined && !segment.talk) {
      before.question = true;
    }
  }
  const { statement, kinds, upset } = parsed;
  return { statement, kinds, upset, clauses, context: current };
}
