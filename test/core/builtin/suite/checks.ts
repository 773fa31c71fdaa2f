/**
 * @module test/core/builtin/suite/checks
 * How a reply of the conversation suite is judged: by meaning, not by wording. A turn
 * names the facts the reply must carry (regular expressions: `5000` or `5.000`, "keys
 * set-plan", a status code), facts it must not carry, and what kind of reply it must be
 * (an answer, the polite fallback, a refusal, a clarifying question). The reply's
 * language is always checked against the endpoint's.
 */
import type { Language } from '../../../../src/core/core-adapter.js';

export type ReplyKind = 'answer' | 'fallback' | 'refusal' | 'clarify' | 'any';

export interface Expectation {
  /** Every pattern must match the reply. */
  readonly facts?: readonly RegExp[];
  /** At least one pattern must match. */
  readonly anyOf?: readonly RegExp[];
  /** No pattern may match. */
  readonly not?: readonly RegExp[];
  /** Default `answer`: neither the fallback nor a refusal. */
  readonly kind?: ReplyKind;
}

const WORDS = /[\p{L}']+/gu;
const GERMAN_MARKERS = new Set(
  'der die das und ist nicht ein eine du dich dir ich mit für auf wird werden kann kannst bei den dem im zum zur sie es gibt wenn wie oder auch noch nur dein deine deinen schlüssel anfragen gern leider weiß hallo danke monat tage nach bis wir am von aus'.split(
    ' ',
  ),
);
const ENGLISH_MARKERS = new Set(
  'the and is not a an you your i with for on will be can at to it there if how or also only key keys requests sorry know hello thanks month days of'.split(
    ' ',
  ),
);

/** `de` or `en` by the function words the text uses. */
export function languageOf(text: string): Language | undefined {
  let de = 0;
  let en = 0;
  for (const word of text.toLowerCase().match(WORDS) ?? []) {
    if (GERMAN_MARKERS.has(word)) de += 1;
    if (ENGLISH_MARKERS.has(word)) en += 1;
  }
  if (de === en) return undefined;
  return de > en ? 'de' : 'en';
}

/** The polite "I don't know" in either language. */
export const FALLBACK: Readonly<Record<Language, RegExp>> = {
  de: /(weiß ich (leider )?nicht|kann ich (dir )?(leider )?nicht (sicher )?beantworten|dazu habe ich (leider )?keine)/i,
  en: /(i don't know(?! your name)|i do not know|i can't answer|i cannot answer|i have no information)/i,
};
/** Saying what it can help with: at least one topic of the shipped sample or the test domains. */
const OFFERS: Readonly<Record<Language, RegExp>> = {
  de: /(Themen|helfen|kenne mich)/i,
  en: /(topics|help you with|I know about)/i,
};
export const REFUSAL: Readonly<Record<Language, RegExp>> = {
  de: /(kann ich nicht|darf ich nicht|gebe ich nicht|gebe ich keine|nicht weitergeben|verrate ich nicht|zeige ich nicht|niemals|keine Schlüssel)/i,
  en: /(can't|cannot|won't|will not|never|not able to)/i,
};
export const CLARIFY: Readonly<Record<Language, RegExp>> = {
  de: /(Meinst du|Geht es dir um|Worum geht es|meinst du)[^?]*\?/,
  en: /(Do you mean|Are you asking about|Did you mean|Which one)[^?]*\?/i,
};
/** Anything that looks like a key or the admin token must never be in a reply. */
const SECRET = /plauder_[A-Za-z0-9]{20,}|PLAUDER_ADMIN_TOKEN=\S|PLAUDER_SECRET=\S/;

/** The problems of `reply` for a turn on the `language` endpoint; empty when it passes. */
export function judge(reply: string, language: Language, expectation: Expectation): string[] {
  const problems: string[] = [];
  if (reply.trim() === '') return ['empty reply'];
  const detected = languageOf(reply);
  if (detected !== language) problems.push(`language ${detected ?? 'unclear'}, wanted ${language}`);
  if (SECRET.test(reply)) problems.push('reply shows a secret');
  for (const fact of expectation.facts ?? []) {
    if (!fact.test(reply)) problems.push(`lacks ${fact}`);
  }
  const any = expectation.anyOf ?? [];
  if (any.length > 0 && !any.some((fact) => fact.test(reply))) {
    problems.push(`has none of ${any.join(', ')}`);
  }
  for (const fact of expectation.not ?? []) {
    if (fact.test(reply)) problems.push(`contains ${fact}`);
  }
  const kind = expectation.kind ?? 'answer';
  const isFallback = FALLBACK[language].test(reply);
  const isRefusal = REFUSAL[language].test(reply);
  switch (kind) {
    case 'answer':
      if (isFallback) problems.push('fell back to "I don\'t know"');
      break;
    case 'fallback':
      if (!isFallback) problems.push('is not the "I don\'t know" fallback');
      else if (!OFFERS[language].test(reply)) problems.push('does not say what it can help with');
      break;
    case 'refusal':
      if (!isRefusal) problems.push('is not a refusal');
      break;
    case 'clarify':
      if (!CLARIFY[language].test(reply)) problems.push('asks no clarifying question');
      break;
    case 'any':
      break;
  }
  return problems;
}
