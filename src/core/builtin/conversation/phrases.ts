/**
 * @module core/builtin/conversation/phrases
 * The fixed sentences of the built-in core in both languages (German in the informal
 * "du", as is usual for chat assistants). Everything topical comes from the knowledge base.
 */
import type { Language } from '../../core-adapter.js';
import type { Manipulation } from './guard.js';

export interface Phrases {
  greeting(name: string | undefined, topics: readonly string[]): string;
  /** A short greeting put in front of an answer. */
  greetingPrefix(name: string | undefined): string;
  wellbeing(): string;
  /** A short "I'm fine" put in front of an answer. */
  wellbeingPrefix(): string;
  thanks(name: string | undefined): string;
  thanksPrefix(): string;
  goodbye(name: string | undefined): string;
  acknowledgement(): string;
  identity(assistant: string): string;
  capabilities(topics: readonly string[]): string;
  help(topics: readonly string[]): string;
  /** The answer to "What is my name?" / "Do you remember me?". */
  yourName(name: string | undefined): string;
  /** Put in front of the reply when the user says their name. */
  introduced(name: string): string;
  /** Follows `introduced` when the message asked nothing else. */
  howCanIHelp(topics: readonly string[]): string;
  /** A calm first sentence for a rude or frustrated message. */
  calm(): string;
  /** The reply to a rude message that names no problem. */
  calmOnly(topics: readonly string[]): string;
  refusal(kind: Manipulation): string;
  clarify(options: readonly string[]): string;
  unknown(suggestions: readonly string[], topics: readonly string[]): string;
}

/** The start of `yourName(undefined)`: a reply that asked for the user's name. */
export const ASKED_FOR_NAME: Readonly<Record<Language, string>> = {
  de: 'Deinen Namen kenne ich noch nicht',
  en: "I don't know your name yet",
};

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
  wellbeingPrefix: () => 'Mir geht es gut, danke!',
  thanks: (name) => `Gern geschehen${comma(name)}! Frag ruhig weiter, wenn noch etwas offen ist.`,
  thanksPrefix: () => 'Gern geschehen!',
  goodbye: (name) => `Tschüss${comma(name)}! Bis zum nächsten Mal.`,
  acknowledgement: () => 'Gut! Frag ruhig, wenn noch etwas offen ist.',
  identity: (assistant) =>
    `Ich bin ${assistant}, ein Assistent, der ohne Internet und ohne KI-Modell auskommt. Ich beantworte Fragen aus meiner Wissensbasis.`,
  capabilities: (topics) =>
    `Ich beantworte Fragen zu diesen Themen: ${list(topics, 'und')}. Wenn du eine sessionId mitschickst, merke ich mir deinen Namen und verstehe Nachfragen wie „Und im anderen Fall?“ im Zusammenhang.`,
  help: (topics) =>
    `Stell mir deine Frage einfach in einem ganzen Satz. Ich kenne mich aus mit: ${list(topics, 'und')}.`,
  yourName: (name) =>
    name === undefined
      ? `${ASKED_FOR_NAME.de}. Wie heißt du? Ich merke mir den Namen nur innerhalb einer Session, also wenn du eine sessionId mitschickst.`
      : `Du heißt ${name}.`,
  introduced: (name) => `Freut mich, ${name}!`,
  howCanIHelp: (topics) =>
    `Wie kann ich dir helfen? Ich kenne mich zum Beispiel hiermit aus: ${list(topics, 'und')}.`,
  calm: () => 'Das ist ärgerlich, tut mir leid. Lass uns das klären.',
  calmOnly: (topics) =>
    `Tut mir leid, dass ich dir bisher nicht helfen konnte. Sag mir, worum es geht, dann versuche ich es noch einmal. Ich kenne mich zum Beispiel hiermit aus: ${list(topics, 'und')}.`,
  refusal: (kind) => {
    switch (kind) {
      case 'instructions':
        return 'Meine Anweisungen ändere ich nicht, und vertrauliche Einstellungen gebe ich nicht heraus. Bei Fragen zum Dienst helfe ich dir aber gern.';
      case 'secret':
        return 'Schlüssel, Tokens, Passwörter und andere Geheimnisse kann ich nicht herausgeben: Ich habe keinen Zugriff darauf, und plauder speichert Schlüssel nur als Hash. Einen verlorenen Schlüssel rotiert der Betreiber (plauder keys rotate ID).';
      case 'action':
        return 'Das kann ich nicht selbst tun: Ich kann weder Schlüssel anlegen noch Pläne, Limits oder Zähler ändern. Das macht der Betreiber mit der Kommandozeile (plauder keys ...) oder in der Admin-Konsole.';
    }
  },
  clarify: (options) => `Meinst du ${list(options, 'oder')}?`,
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
  wellbeingPrefix: () => "I'm doing well, thanks!",
  thanks: (name) => `You're welcome${comma(name)}! Feel free to ask if anything else is unclear.`,
  thanksPrefix: () => "You're welcome!",
  goodbye: (name) => `Goodbye${comma(name)}! Talk to you next time.`,
  acknowledgement: () => 'Good! Just ask if anything else is unclear.',
  identity: (assistant) =>
    `I'm ${assistant}, an assistant that works without internet access and without an AI model. I answer questions from my knowledge base.`,
  capabilities: (topics) =>
    `I can answer questions about these topics: ${list(topics, 'and')}. If you send a sessionId, I remember your name and understand follow-up questions like "And in the other case?" in context.`,
  help: (topics) =>
    `Just ask your question in a full sentence. I know about: ${list(topics, 'and')}.`,
  yourName: (name) =>
    name === undefined
      ? `${ASKED_FOR_NAME.en}. What is it? I only remember it within a session, that is when you send a sessionId.`
      : `Your name is ${name}.`,
  introduced: (name) => `Nice to meet you, ${name}!`,
  howCanIHelp: (topics) =>
    `How can I help you? I know about these topics, for example: ${list(topics, 'and')}.`,
  calm: () => "Sorry for the trouble, that's annoying. Let's sort it out.",
  calmOnly: (topics) =>
    `Sorry I haven't been able to help so far. Tell me what you are trying to do and I'll try again. I know about these topics, for example: ${list(topics, 'and')}.`,
  refusal: (kind) => {
    switch (kind) {
      case 'instructions':
        return "I can't change my instructions, and I don't give out confidential settings. I'm happy to help with questions about the service, though.";
      case 'secret':
        return "I can't give out keys, tokens, passwords or other secrets: I have no access to them, and plauder stores keys only as a hash. A lost key is rotated by the operator (plauder keys rotate ID).";
      case 'action':
        return "I can't do that myself: I can neither create keys nor change plans, limits or counters. The operator does that with the command line (plauder keys ...) or in the admin console.";
    }
  },
  clarify: (options) => `Do you mean ${list(options, 'or')}?`,
  unknown: (suggestions, topics) => {
    const guess = suggestions.length > 0 ? ` Did you mean ${list(suggestions, 'or')}?` : '';
    return `Sorry, I don't know that.${guess} I can answer questions about these topics: ${list(topics, 'and')}.`;
  },
};

export const PHRASES: Readonly<Record<Language, Phrases>> = { de: GERMAN, en: ENGLISH };
