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
import { createInterpreter, type Interpretation } from '../matching/interpreter.js';
import { createMatcher, type QueryUnit } from '../matching/matcher.js';
import { createTermResolver } from '../matching/term-resolver.js';
import { tokenize } from '../text/tokenize.js';
import { PHRASES } from './phrases.js';
import { createSmallTalkDetector, type SmallTalk, type SmallTalkKind } from './small-talk.js';
import { createNameReader, type NameStatement } from './user-memory.js';

/** How many earlier turns can shape the reading of a follow-up. */
const CONTEXT_TURNS = 3;
/** Entries below this confidence are not suggested as "did you mean". */
const SUGGESTION_MIN = 0.1;
const MAX_SUGGESTIONS = 2;
const DEFAULT_OFFER_COUNT = 5;

export interface ReplyComposer {
  compose(language: Language, message: string, history: readonly Turn[]): string;
}

interface Analysis {
  readonly statement: NameStatement | undefined;
  readonly talk: SmallTalk;
  /** Whether anything outside small talk could be a question. */
  readonly hasContent: boolean;
}

function join(...parts: ReadonlyArray<string | undefined>): string {
  return parts.filter((part) => part !== undefined && part !== '').join(' ');
}

export function createReplyComposer(index: KnowledgeIndex, threshold: number): ReplyComposer {
  const resolver = createTermResolver(index);
  const interpreter = createInterpreter(resolver, createMatcher(index), threshold);
  const smallTalk = createSmallTalkDetector(tokenize(index.base.name));
  const names = createNameReader(
    (word) => index.ignored.has(word),
    (word) => index.forms.has(word),
  );
  const offered =
    index.offer.length > 0 ? index.offer : index.entries.slice(0, DEFAULT_OFFER_COUNT);
  const topicsIn = (language: Language) => offered.map((indexed) => indexed.entry.topic[language]);

  const analyse = (message: string): Analysis => {
    const statement = names.read(message);
    const text = statement
      ? `${message.slice(0, statement.start)} ${message.slice(statement.end)}`
      : message;
    const talk = smallTalk.detect(tokenize(text));
    return { statement, talk, hasContent: talk.rest.some((token) => !index.ignored.has(token)) };
  };

  /** The query of the last turns, each read in the light of the one before. */
  const contextOf = (history: readonly Turn[]): readonly QueryUnit[] => {
    let context: readonly QueryUnit[] = [];
    for (const turn of history.slice(-CONTEXT_TURNS)) {
      const { talk, hasContent } = analyse(turn.message);
      if (!hasContent) continue;
      const reading = interpreter.interpret(talk.rest, context);
      if (reading.units.some((unit) => unit.concepts.length > 0)) context = reading.units;
    }
    return context;
  };

  const smallTalkReply = (
    kinds: readonly SmallTalkKind[],
    name: string | undefined,
    language: Language,
  ) => {
    const phrases = PHRASES[language];
    const has = (kind: SmallTalkKind) => kinds.includes(kind);
    const topics = topicsIn(language);
    const greet = has('greeting') ? phrases.greetingPrefix(name) : undefined;
    if (has('identity'))
      return join(greet, index.base.intro?.[language] ?? phrases.identity(index.base.name));
    if (has('capabilities')) return join(greet, phrases.capabilities(topics));
    if (has('help')) return join(greet, phrases.help(topics));
    if (has('wellbeing')) return join(greet, phrases.wellbeing());
    if (has('goodbye'))
      return join(has('thanks') ? phrases.thanksPrefix() : undefined, phrases.goodbye(name));
    if (has('thanks')) return phrases.thanks(name);
    if (has('greeting')) return phrases.greeting(name, topics);
    return undefined;
  };

  const unknown = (reading: Interpretation | undefined, language: Language) => {
    const suggestions = (reading?.candidates ?? [])
      .filter((match) => match.confidence >= SUGGESTION_MIN)
      .slice(0, MAX_SUGGESTIONS)
      .map((match) => match.entry.entry.topic[language]);
    const topics = topicsIn(language).filter((topic) => !suggestions.includes(topic));
    return PHRASES[language].unknown(suggestions, topics);
  };

  return {
    compose(language, message, history) {
      const phrases = PHRASES[language];
      const { statement, talk, hasContent } = analyse(message);
      const name = statement?.name ?? names.fromHistory(history);
      if (statement === undefined && talk.kinds.includes('askName')) return phrases.yourName(name);
      const reading = hasContent ? interpreter.interpret(talk.rest, contextOf(history)) : undefined;
      const answer = reading?.best?.entry.entry.answer[language];
      const small = smallTalkReply(talk.kinds, name, language);
      if (statement !== undefined) {
        // "Hi, I'm Anna": the greeting is answered by "Nice to meet you", not a second hello.
        const question = smallTalkReply(
          talk.kinds.filter((kind) => kind !== 'greeting'),
          name,
          language,
        );
        const rest = answer ?? question ?? phrases.howCanIHelp(topicsIn(language));
        return join(phrases.introduced(statement.name), rest);
      }
      if (answer !== undefined) {
        const prefix = talk.kinds.includes('greeting')
          ? phrases.greetingPrefix(name)
          : talk.kinds.includes('thanks')
            ? phrases.thanksPrefix()
            : undefined;
        return join(prefix, answer);
      }
      if (small !== undefined) return small;
      if (!hasContent) return phrases.help(topicsIn(language));
      return unknown(reading, language);
    },
  };
}
