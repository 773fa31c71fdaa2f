/**
 * @module core/builtin/conversation/reply-composer
 * Puts a reply together from every part of the message, in a natural order:
 * 1. A message that tries to get secrets or change the assistant's rules → a refusal.
 * 2. The user states their name → "Nice to meet you, Anna!"; a greeting → "Hello!".
 * 3. "What is my name?" / "Do you remember me?" → the name from this session's history.
 * 4. A rude or frustrated message → one calm sentence, then the rest.
 * 5. Each question of the message (read against the conversation's topic) → its answer;
 *    two close entries → a short clarifying question; nothing fitting → "I don't know",
 *    the closest topics and the topics on offer.
 * 6. Small talk without a question (thanks, goodbye, who are you, ...) → its reply.
 * The reply is always in the endpoint's language and never empty.
 */
import type { Language, Turn } from '../../core-adapter.js';
import type { IndexedEntry, KnowledgeIndex } from '../knowledge/knowledge-index.js';
import { createInterpreter } from '../matching/interpreter.js';
import { createMatcher, type Match } from '../matching/matcher.js';
import { createTermResolver } from '../matching/term-resolver.js';
import type { PlanFacts } from '../service-facts.js';
import { tokenize } from '../text/tokenize.js';
import { joinSentences, smallTalkReply, unknownReply } from './canned-replies.js';
import { buildDialogueState, type DialogueState } from './dialogue-state.js';
import { detectManipulation } from './guard.js';
import {
  type ClauseReading,
  type MessageAnalysis,
  MessageParses,
  type ReaderParts,
  readMessage,
} from './message-reader.js';
import { PHRASES } from './phrases.js';
import { createSmallTalkDetector, type SmallTalkKind } from './small-talk.js';
import { createNameReader } from './user-memory.js';

/** How many tokens of a message are read: bounds the work for very long messages. */
const MESSAGE_TOKENS = 160;
/**
 * Messages whose parse is kept, per token budget and name question: the last turns of the
 * sessions in use, each read again by the next three requests of its session.
 */
const PARSE_CACHE_LIMIT = 512;
/** At most this many answers in one reply. */
const MAX_ANSWERS = 3;
/** Topics offered when the knowledge base names none. */
const DEFAULT_OFFER_COUNT = 5;
/** Dialogue acts that make a message without a question complete on its own. */
const SOCIAL: ReadonlySet<SmallTalkKind> = new Set([
  'greeting',
  'wellbeing',
  'thanks',
  'goodbye',
  'identity',
  'capabilities',
  'help',
  'acknowledgement',
]);
const FOLLOW_UP_ONLY = new Set(['und', 'and', 'jetzt', 'now', 'nun', 'so', 'also', 'na']);

export interface ReplyComposer {
  compose(language: Language, message: string, history: readonly Turn[]): string;
  /** The same, with what was recognised and scored (for `plauder ask --explain`). */
  explain(language: Language, message: string, history: readonly Turn[]): Explanation;
}

export interface Explanation {
  readonly reply: string;
  readonly state: DialogueState;
  readonly analysis: MessageAnalysis | undefined;
  readonly refused: string | undefined;
}

interface Parts extends ReaderParts {
  readonly topics: Readonly<Record<Language, readonly string[]>>;
}

/** The plan an answer is about: named in the question, else carried from the conversation. */
function planOf(parts: Parts, clause: ClauseReading): PlanFacts | undefined {
  for (const unit of [...clause.reading.own, ...clause.reading.units]) {
    for (const concept of unit.concepts) {
      const plan = parts.index.plans.get(concept);
      if (plan !== undefined) return plan;
    }
  }
  return undefined;
}

/** The answered clauses: the questions, or failing those the most confident statement. */
function chooseAnswers(clauses: readonly ClauseReading[]): ClauseReading[] {
  const answered = clauses.filter((clause) => clause.reading.outcome.kind === 'answer');
  const questions = answered.filter((clause) => clause.question);
  if (questions.length > 0) return questions;
  const confidence = (clause: ClauseReading) =>
    clause.reading.outcome.kind === 'answer' ? clause.reading.outcome.match.confidence : 0;
  const best = [...answered].sort((a, b) => confidence(b) - confidence(a))[0];
  return best === undefined ? [] : [best];
}

function answersOf(parts: Parts, clauses: readonly ClauseReading[], language: Language): string[] {
  const seen = new Set<IndexedEntry>();
  const answers: string[] = [];
  for (const clause of chooseAnswers(clauses)) {
    if (clause.reading.outcome.kind !== 'answer') continue;
    const { entry } = clause.reading.outcome.match;
    if (seen.has(entry) || answers.length >= MAX_ANSWERS) continue;
    seen.add(entry);
    answers.push(entry.answer(language, planOf(parts, clause)));
  }
  return answers;
}

/** A clarifying question, or "I don't know", for a message with content but no answer. */
function withoutAnswer(
  parts: Parts,
  clauses: readonly ClauseReading[],
  language: Language,
): string {
  const ordered = [...clauses.filter((c) => c.question), ...clauses.filter((c) => !c.question)];
  for (const clause of ordered) {
    const { outcome } = clause.reading;
    if (outcome.kind === 'clarify') {
      return PHRASES[language].clarify(
        outcome.options.map((match) => match.entry.entry.topic[language]),
      );
    }
  }
  const candidates: Match[] = ordered.flatMap((clause) => clause.reading.candidates);
  candidates.sort((a, b) => b.confidence - a.confidence);
  return unknownReply(candidates, language, parts.topics[language]);
}

/** A complaint without a question is likely about these topics (at most two). */
const LIKELY = 0.3;

function likelyTopics(clauses: readonly ClauseReading[], language: Language): string[] {
  const topics: string[] = [];
  const candidates = clauses.flatMap((clause) => clause.reading.candidates);
  candidates.sort((a, b) => b.confidence - a.confidence);
  for (const match of candidates) {
    if (match.confidence < LIKELY || topics.length >= 2) break;
    const topic = match.entry.entry.topic[language];
    if (!topics.includes(topic)) topics.push(topic);
  }
  return topics;
}

function isBareFollowUp(message: string): boolean {
  const tokens = tokenize(message, 8);
  return (
    tokens.length > 0 && tokens.length <= 3 && tokens.every((token) => FOLLOW_UP_ONLY.has(token))
  );
}

function compose(
  parts: Parts,
  language: Language,
  message: string,
  state: DialogueState,
  analysis: MessageAnalysis,
): string {
  const phrases = PHRASES[language];
  const topics = parts.topics[language];
  const { statement, kinds, upset } = analysis;
  const has = (kind: (typeof kinds)[number]) => kinds.includes(kind);
  const name = statement ?? state.name;
  const answers = answersOf(parts, analysis.clauses, language);
  // "thanks I guess", "you are useless": no question and nothing that fits is no reason to
  // say "I don't know"; the thanks or the insult is what the message is about.
  const social = upset || kinds.some((kind) => SOCIAL.has(kind));
  const clauses =
    answers.length === 0 && social && !analysis.clauses.some((clause) => clause.question)
      ? []
      : analysis.clauses;
  const askName =
    has('askName') || (state.lastAskedName && clauses.length === 0 && isBareFollowUp(message));

  const opening: Array<string | undefined> = [];
  if (statement !== undefined) opening.push(phrases.introduced(statement.address));
  else if (has('greeting') && (answers.length > 0 || clauses.length > 0 || askName)) {
    opening.push(phrases.greetingPrefix(name?.address));
  }
  if (askName && statement === undefined) opening.push(phrases.yourName(name?.full));
  if (has('thanks') && (answers.length > 0 || clauses.length > 0))
    opening.push(phrases.thanksPrefix());
  if (has('wellbeing') && (answers.length > 0 || clauses.length > 0))
    opening.push(phrases.wellbeingPrefix());

  if (answers.length > 0 || clauses.length > 0) {
    const rest = answers.length > 0 ? answers : [withoutAnswer(parts, clauses, language)];
    const others = kinds.filter((kind) => kind === 'identity' || kind === 'capabilities');
    const small =
      others.length > 0
        ? smallTalkReply(others, undefined, language, parts.index.base, topics)
        : undefined;
    const closing = has('goodbye') ? phrases.goodbye(undefined) : undefined;
    return joinSentences(...opening, upset ? phrases.calm() : undefined, small, ...rest, closing);
  }
  if (upset) {
    // "Your stupid API keeps throwing 401s": no question, but a topic it is likely about.
    const guesses = likelyTopics(analysis.clauses, language);
    if (guesses.length > 0) {
      return joinSentences(...opening, phrases.calm(), phrases.clarify(guesses));
    }
    return joinSentences(...opening, phrases.calmOnly(topics));
  }
  const smallKinds = kinds.filter(
    (kind) => kind !== 'askName' && (statement === undefined || kind !== 'greeting'),
  );
  const small = smallTalkReply(smallKinds, name?.address, language, parts.index.base, topics);
  if (opening.length > 0) {
    return joinSentences(
      ...opening,
      small ?? (statement !== undefined ? phrases.howCanIHelp(topics) : undefined),
    );
  }
  if (small !== undefined) return small;
  if (has('acknowledgement')) return phrases.acknowledgement();
  return phrases.help(topics);
}

export function createReplyComposer(index: KnowledgeIndex, threshold: number): ReplyComposer {
  const interpreter = createInterpreter(
    index,
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
    parses: new MessageParses(PARSE_CACHE_LIMIT),
    topics: { de: topicsIn('de'), en: topicsIn('en') },
  };
  const explain = (language: Language, message: string, history: readonly Turn[]): Explanation => {
    const manipulation = detectManipulation(message);
    const state = buildDialogueState(parts, history);
    if (manipulation !== undefined) {
      return {
        reply: PHRASES[language].refusal(manipulation),
        state,
        analysis: undefined,
        refused: manipulation,
      };
    }
    const analysis = readMessage(parts, message, state.context, {
      askedForName: state.askedForName,
      maxTokens: MESSAGE_TOKENS,
    });
    return {
      reply: compose(parts, language, message, state, analysis),
      state,
      analysis,
      refused: undefined,
    };
  };
  return {
    compose: (language, message, history) => explain(language, message, history).reply,
    explain,
  };
}
