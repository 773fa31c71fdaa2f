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
  EMPTY_CONTEXT,
  type Interpretation,
  type Interpreter,
  type ReadingContext,
} from '../matching/interpreter.js';
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
}

/** Words that start a new question after "und" / "and" inside one sentence. */
const CLAUSE_STARTS = new Set(
  `wie was wann wo warum wieso welche welcher welches welchen wer kann konnen darf gibt ist sind
  laufen lauft zahlen zahlt muss how what when where why which who do does can could is are will`.split(
    /\s+/,
  ),
);
const CONJUNCTIONS = new Set(['und', 'and', 'sowie', 'also']);

/** Splits after "und"/"and" when a question word follows, or at ", und" / ", and". */
function splitClauses(tokens: readonly string[], commas: ReadonlySet<number>): string[][] {
  const clauses: string[][] = [[]];
  tokens.forEach((token, i) => {
    const current = clauses.at(-1) as string[];
    const next = tokens[i + 1];
    const newClause =
      CONJUNCTIONS.has(token) &&
      current.length >= 2 &&
      next !== undefined &&
      (CLAUSE_STARTS.has(next) || commas.has(i));
    if (newClause) clauses.push([]);
    else current.push(token);
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

function sameAnswer(reading: Interpretation, context: ReadingContext): boolean {
  return reading.outcome.kind === 'answer' && reading.outcome.match.entry === context.topics[0];
}

export function readMessage(
  parts: ReaderParts,
  message: string,
  context: ReadingContext,
  options: { readonly askedForName: boolean; readonly maxTokens: number },
): MessageAnalysis {
  const statement = parts.names.read(message, options.askedForName);
  // The statement is not part of the question: "Ich heiße Anna, was kostet das?".
  const text = statement
    ? `${message.slice(0, statement.start)} ${message.slice(statement.end)}`
    : message;
  const kinds: SmallTalkKind[] = [];
  const clauses: ClauseReading[] = [];
  let upset = false;
  let current = context;
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
      ? commaPositions(segment.text, tokens.length)
      : NO_COMMAS;
    let found = false;
    const before = clauses.at(-1);
    for (const clause of splitClauses(talk.rest, commas)) {
      const units = parts.interpreter.unitsOf(clause);
      const known = units.some((unit) => unit.concepts.length > 0);
      // Unknown words next to small talk ("cheers mate") are no question.
      const meaningful = clause.some((token) => !parts.index.ignored.has(token));
      if (!known && (!meaningful || talk.kinds.length > 0 || tone.upset)) continue;
      let reading = parts.interpreter.interpret(clause, current);
      // A later part of the same message asks something new, not the same again.
      if (current !== context && sameAnswer(reading, current)) {
        const alone = parts.interpreter.interpret(clause, EMPTY_CONTEXT);
        if (alone.outcome.kind === 'answer') reading = alone;
      }
      // Words next to small talk that fit nothing ("thank you so much") ask nothing.
      if (reading.outcome.kind === 'none' && talk.kinds.length > 0 && !segment.question) continue;
      clauses.push({ question: segment.question, reading });
      found ||= reading.outcome.kind !== 'none';
      if (reading.outcome.kind === 'answer') {
        current = contextAfter(reading, current, reading.outcome.match.entry);
      }
    }
    // "Bei mir kommt immer 401. Woran kann das liegen?": the question is about the sentence before.
    if (!found && segment.question && before !== undefined && talk.kinds.length === 0) {
      before.question = true;
    }
  }
  return { statement, kinds, upset, clauses, context: current };
}
