/**
 * @module core/builtin/conversation/phrases
 * The fixed sentences of the built-in core in both languages (German in the informal
 * "du", as is usual for chat assistants). Everything topical comes from the knowledge base.
 */
import type { Language } from '../../core-adapter.js';

export interface Phrases {
  greeting(name: string | undefined, topics: readonly string[]): string;
  /** A short greeting put in front of an answer. */
  greetingPrefix(name: string | undefined): string;
  wellbeing(): string;
  thanks(name: string | undefined): string;
  thanksPrefix(): string;
  goodbye(name: string | undefined): string;
  identity(assistant: string): string;
  capabilities(topics: readonly string[]): string;
  help(topics: readonly string[]): string;
  yourName(name: string | undefined): string;
  /** Put in front of the reply when the user says their name. */
  introduced(name: string): string;
  /** Follows `introduced` when the message asked nothing else. */
  howCanIHelp(topics: readonly string[]): string;
  unknown(suggestions: readonly string[], topics: readonly string[]): string;
}

/** "A, B und C" / "A, B and C". */
function list(items: readonly string[], and: string): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${and} ${items.at(-1)}`;
}

const comma = (name: string | undefined) => (name === undefined ? '' : `, ${name}`);
const space = (name: string | undefined) => (name === undefined ? '' : ` ${name}`);

const GERMAN: Phrases = {
  greeting: (name, topics) =>
    `Hallo${space(name)}! Ich beantworte gern deine Fragen, zum Beispiel zu diesen Themen: ${list(topics, 'und')}.`,
  greetingPrefix: (name) => `Hallo${space(name)}!`,
  wellbeing: () => 'Danke der Nachfrage, mir geht es gut! Wobei kann ich dir helfen?',
  thanks: (name) => `Gern geschehen${comma(name)}! Frag ruhig weiter, wenn noch etwas offen ist.`,
  thanksPrefix: () => 'Gern geschehen!',
  goodbye: (name) => `Tschüss${comma(name)}! Bis zum nächsten Mal.`,
  identity: (assistant) =>
    `Ich bin ${assistant}, ein Assistent, der ohne Internet und ohne KI-Modell auskommt. Ich beantworte Fragen aus meiner Wissensbasis.`,
  capabilities: (topics) =>
    `Ich beantworte Fragen zu diesen Themen: ${list(topics, 'und')}. Wenn du eine sessionId mitschickst, merke ich mir deinen Namen und verstehe Nachfragen wie „Und im anderen Fall?“ im Zusammenhang.`,
  help: (topics) =>
    `Stell mir deine Frage einfach in einem ganzen Satz. Ich kenne mich aus mit: ${list(topics, 'und')}.`,
  yourName: (name) =>
    name === undefined
      ? 'Deinen Namen kenne ich noch nicht. Sag mir zum Beispiel „Ich heiße …“. Ich merke mir das nur innerhalb einer Session, also wenn du eine sessionId mitschickst.'
      : `Du heißt ${name}.`,
  introduced: (name) => `Freut mich, ${name}!`,
  howCanIHelp: (topics) =>
    `Wie kann ich dir helfen? Ich kenne mich zum Beispiel hiermit aus: ${list(topics, 'und')}.`,
  unknown: (suggestions, topics) => {
    const guess =
      suggestions.length > 0 ? ` Meintest du vielleicht: ${list(suggestions, 'oder')}?` : '';
    return `Das weiß ich leider nicht.${guess} Ich kann dir Fragen zu diesen Themen beantworten: ${list(topics, 'und')}.`;
  },
};

const ENGLISH: Phrases = {
  greeting: (name, topics) =>
    `Hello${space(name)}! I'm happy to answer your questions, for example on these topics: ${list(topics, 'and')}.`,
  greetingPrefix: (name) => `Hello${space(name)}!`,
  wellbeing: () => "I'm doing well, thanks for asking! What can I help you with?",
  thanks: (name) => `You're welcome${comma(name)}! Feel free to ask if anything else is unclear.`,
  thanksPrefix: () => "You're welcome!",
  goodbye: (name) => `Goodbye${comma(name)}! Talk to you next time.`,
  identity: (assistant) =>
    `I'm ${assistant}, an assistant that works without internet access and without an AI model. I answer questions from my knowledge base.`,
  capabilities: (topics) =>
    `I can answer questions about these topics: ${list(topics, 'and')}. If you send a sessionId, I remember your name and understand follow-up questions like "And in the other case?" in context.`,
  help: (topics) =>
    `Just ask your question in a full sentence. I know about: ${list(topics, 'and')}.`,
  yourName: (name) =>
    name === undefined
      ? `I don't know your name yet. Tell me, for example, "My name is …". I only remember it within a session, that is when you send a sessionId.`
      : `Your name is ${name}.`,
  introduced: (name) => `Nice to meet you, ${name}!`,
  howCanIHelp: (topics) =>
    `How can I help you? I know about these topics, for example: ${list(topics, 'and')}.`,
  unknown: (suggestions, topics) => {
    const guess = suggestions.length > 0 ? ` Did you mean ${list(suggestions, 'or')}?` : '';
    return `Sorry, I don't know that.${guess} I can answer questions about these topics: ${list(topics, 'and')}.`;
  },
};

export const PHRASES: Readonly<Record<Language, Phrases>> = { de: GERMAN, en: ENGLISH };
