/**
 * @module core/builtin/conversation/canned-replies
 * Replies that do not come from a knowledge entry: small talk and "I don't know", put
 * together from the phrases of the endpoint's language and the topics on offer.
 */
import type { Language } from '../../core-adapter.js';
import type { KnowledgeBase } from '../knowledge/knowledge-base.js';
import type { Match } from '../matching/matcher.js';
import { PHRASES } from './phrases.js';
import type { SmallTalkKind } from './small-talk.js';

/** Entries below this confidence are not suggested as "did you mean". */
const SUGGESTION_MIN = 0.1;
const MAX_SUGGESTIONS = 2;

export function joinSentences(...parts: ReadonlyArray<string | undefined>): string {
  return parts.filter((part) => part !== undefined && part !== '').join(' ');
}

/**
 * The reply to the small talk in a message, the most specific kind first
 * ("Hi, who are you?" is answered as "who are you?", after a short hello).
 */
export function smallTalkReply(
  kinds: readonly SmallTalkKind[],
  name: string | undefined,
  language: Language,
  base: KnowledgeBase,
  topics: readonly string[],
): string | undefined {
  const phrases = PHRASES[language];
  const has = (kind: SmallTalkKind) => kinds.includes(kind);
  const greet = has('greeting') ? phrases.greetingPrefix(name) : undefined;
  if (has('identity'))
    return joinSentences(greet, base.intro?.[language] ?? phrases.identity(base.name));
  if (has('capabilities')) {
    return joinSentences(greet, base.capabilities?.[language], phrases.capabilities(topics));
  }
  if (has('help')) return joinSentences(greet, phrases.help(topics));
  if (has('wellbeing')) return joinSentences(greet, phrases.wellbeing());
  if (has('goodbye')) {
    return joinSentences(has('thanks') ? phrases.thanksPrefix() : undefined, phrases.goodbye(name));
  }
  if (has('thanks')) return phrases.thanks(name);
  if (has('greeting')) return phrases.greeting(name, topics);
  return undefined;
}

/** "I don't know", the entries that matched partly, and the topics on offer. */
export function unknownReply(
  candidates: readonly Match[],
  language: Language,
  topics: readonly string[],
): string {
  const suggestions = candidates
    .filter((match) => match.confidence >= SUGGESTION_MIN)
    .slice(0, MAX_SUGGESTIONS)
    .map((match) => match.entry.entry.topic[language]);
  const others = topics.filter((topic) => !suggestions.includes(topic));
  return PHRASES[language].unknown(suggestions, others);
}
