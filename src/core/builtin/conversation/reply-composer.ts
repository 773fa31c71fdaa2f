/**
 * @module core/builtin/conversation/reply-composer
 * Decides what to say, in this order:
 * 1. "What is my name?" → the name from this session's history (or that it is unknown).
 * 2. The user states their name → "Nice to meet you, Anna!" plus the answer to the rest
 *    of the message, if it asked something.
 * 3. A knowledge entry matched with enough confidence (follow-ups resolved against the
 *    previous turns) → its answer, after a short "Hello!" / "You're welcome!" when the
 *    message began with one.
 * 4. Small talk → its reply (greeting by name when the name is known).
 * 5. Otherwise → "I don't know", the closest topics, and the topics on offer.
 * The reply is always in the endpoint's language and never empty.
 */
import type { Language, Turn } from '../../core-adapter.js';
import type { KnowledgeIndex } from '../knowledge/knowledge-index.js';
import { createInterpreter, type Interpreter } from '../matching/interpreter.js';
import { createMatcher, type QueryUnit } from '../matching/matcher.js';
import { createTermResolver } from '../matching/term-resolver.js';
import { tokenize } from '../text/tokenize.js';
import { answerPrefix, joinSentences, smallTalkReply, unknownReply } from './canned-replies.js';
import { PHRASES } from './phrases.js';
import { createSmallTalkDetector, type SmallTalk, type SmallTalkDetector } from './small-talk.js';
import { createNameReader, type NameReader, type NameStatement } from './user-memory.js';

/** How many earlier turns can shape the reading of a follow-up. */
const CONTEXT_TURNS = 3;
/**
 * How many tokens of a message are read: questions are short, and the caps bound the work
 * for very long messages (an earlier turn only needs to give the topic).
 */
const MESSAGE_TOKENS = 64;
const HISTORY_TOKENS = 24;
const HISTORY_CHARS = 500;
/** Topics offered when the knowledge base names none. */
const DEFAULT_OFFER_COUNT = 5;

export interface ReplyComposer {
  compose(language: Language, message: string, history: readonly Turn[]): string;
}

/** One message taken apart: a name statement, small talk, and what is left to look up. */
interface Analysis {
  readonly statement: NameStatement | undefined;
  readonly talk: SmallTalk;
  /** Whether anything outside small talk could be a question. */
  readonly hasContent: boolean;
}

interface Parts {
  readonly index: KnowledgeIndex;
  readonly interpreter: Interpreter;
  readonly smallTalk: SmallTalkDetector;
  readonly names: NameReader;
  readonly topics: Readonly<Record<Language, readonly string[]>>;
}

function analyse(parts: Parts, message: string, maxTokens = MESSAGE_TOKENS): Analysis {
  const statement = parts.names.read(message);
  // The statement is not part of the question: "Ich heiße Anna, was kostet das?".
  const text = statement
    ? `${message.slice(0, statement.start)} ${message.slice(statement.end)}`
    : message;
  const talk = parts.smallTalk.detect(tokenize(text, maxTokens));
  return {
    statement,
    talk,
    hasContent: talk.rest.some((token) => !parts.index.ignored.has(token)),
  };
}

/** The query of the last turns, each read in the light of the one before. */
function contextOf(parts: Parts, history: readonly Turn[]): readonly QueryUnit[] {
  let context: readonly QueryUnit[] = [];
  for (const turn of history.slice(-CONTEXT_TURNS)) {
    const message = turn.message.slice(0, HISTORY_CHARS);
    const { talk, hasContent } = analyse(parts, message, HISTORY_TOKENS);
    if (!hasContent) continue; // small talk in between keeps the topic
    const reading = parts.interpreter.interpret(talk.rest, context);
    if (reading.units.some((unit) => unit.concepts.length > 0)) context = reading.units;
  }
  return context;
}

function compose(
  parts: Parts,
  language: Language,
  message: string,
  history: readonly Turn[],
): string {
  const phrases = PHRASES[language];
  const topics = parts.topics[language];
  const { statement, talk, hasContent } = analyse(parts, message);
  const name = statement?.name ?? parts.names.fromHistory(history);
  if (statement === undefined && talk.kinds.includes('askName')) return phrases.yourName(name);
  const reading = hasContent
    ? parts.interpreter.interpret(talk.rest, contextOf(parts, history))
    : undefined;
  const answer = reading?.best?.entry.entry.answer[language];
  if (statement !== undefined) {
    // "Hi, I'm Anna": the greeting is answered by "Nice to meet you", not by a second hello.
    const kinds = talk.kinds.filter((kind) => kind !== 'greeting');
    const rest = answer ?? smallTalkReply(kinds, name, language, parts.index.base, topics);
    return joinSentences(phrases.introduced(statement.name), rest ?? phrases.howCanIHelp(topics));
  }
  if (answer !== undefined) return joinSentences(answerPrefix(talk.kinds, name, language), answer);
  const small = smallTalkReply(talk.kinds, name, language, parts.index.base, topics);
  if (small !== undefined) return small;
  if (!hasContent) return phrases.help(topics);
  return unknownReply(reading?.candidates ?? [], language, topics);
}

export function createReplyComposer(index: KnowledgeIndex, threshold: number): ReplyComposer {
  const interpreter = createInterpreter(
    index.alternatives,
    createTermResolver(index),
    createMatcher(index),
    threshold,
  );
  const names = createNameReader(
    (word) => index.ignored.has(word),
    (word) => index.forms.has(word),
  );
  const offered =
    index.offer.length > 0 ? index.offer : index.entries.slice(0, DEFAULT_OFFER_COUNT);
  const topicsIn = (language: Language) => offered.map((indexed) => indexed.entry.topic[language]);
  const parts: Parts = {
    index,
    interpreter,
    smallTalk: createSmallTalkDetector(tokenize(index.base.name)),
    names,
    topics: { de: topicsIn('de'), en: topicsIn('en') },
  };
  return { compose: (language, message, history) => compose(parts, language, message, history) };
}
