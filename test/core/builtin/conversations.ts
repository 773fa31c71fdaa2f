/**
 * @module test/core/builtin/conversations
 * Conversations with the built-in core and what each reply must (not) contain. Pure data,
 * so the same table can be replayed against the core directly and over HTTP through the
 * real server: send the turns in order under one sessionId (or without one when
 * `session` is false) to the conversation's endpoint (`de` → /api/chat, `en` →
 * /api/chat-en, or per turn with `language`), and check each reply with `replyProblems`.
 *
 * Checks are case-insensitive substring tests. Where a case asks in one language and
 * expects the other, the expected words occur only in the other language's answer.
 */
import type { Language } from '../../../src/core/core-adapter.js';

export interface ConversationTurn {
  readonly message: string;
  /** The endpoint's language for this turn, when it differs from the conversation's. */
  readonly language?: Language;
  /** Every string must occur in the reply. */
  readonly includes?: readonly string[];
  /** At least one of these strings must occur in the reply. */
  readonly includesAny?: readonly string[];
  /** None of these strings may occur in the reply. */
  readonly excludes?: readonly string[];
}

export interface Conversation {
  readonly name: string;
  readonly language: Language;
  /** false: every turn is sent without history (no sessionId). Default true. */
  readonly session?: boolean;
  readonly turns: readonly ConversationTurn[];
}

/** The problems of `reply` against the expectations of `turn`; empty when it passes. */
export function replyProblems(turn: ConversationTurn, reply: string): string[] {
  const text = reply.toLowerCase();
  const problems: string[] = [];
  if (reply.trim() === '') problems.push('reply is empty');
  for (const part of turn.includes ?? []) {
    if (!text.includes(part.toLowerCase())) problems.push(`reply lacks "${part}"`);
  }
  const any = turn.includesAny ?? [];
  if (any.length > 0 && !any.some((part) => text.includes(part.toLowerCase()))) {
    problems.push(`reply has none of ${any.map((part) => `"${part}"`).join(', ')}`);
  }
  for (const part of turn.excludes ?? []) {
    if (text.includes(part.toLowerCase())) problems.push(`reply contains "${part}"`);
  }
  return problems;
}

const DONT_KNOW_DE = 'weiß ich leider nicht';
const DONT_KNOW_EN = "don't know";

/** One question, one expected answer: the bulk of the knowledge-base coverage. */
function ask(
  name: string,
  language: Language,
  message: string,
  ...includes: string[]
): Conversation {
  return { name, language, turns: [{ message, includes }] };
}

// biome-ignore format: one row per case reads best as a table
const TOPICS_DE: readonly Conversation[] = [
  ask('de: plans', 'de', 'Welche Pläne gibt es?', 'Es gibt zwei Pläne'),
  ask('de: limits', 'de', 'Wie viele Anfragen darf ich im Monat stellen?', '1000', '5000'),
  ask('de: standard limit', 'de', 'Wie viele Anfragen hat der Standard-Plan?', 'Plan Standard hast du 1000'),
  ask('de: plus limit', 'de', 'Was ist das Limit im Plus-Tarif?', 'Plan Plus hast du 5000'),
  ask('de: custom plans', 'de', 'Kann der Betreiber eigene Pläne mit höheren Limits konfigurieren?', 'PLAUDER_PLANS=standard=1000'),
  ask('de: change plan', 'de', 'Wie kann ich meinen Plan wechseln?', 'keys set-plan'),
  ask('de: inactive plan', 'de', 'Was bedeutet es, wenn mein Plan inaktiv ist?', 'plan_inactive', 'keys activate'),
  ask('de: pricing', 'de', 'Was kostet plauder?', 'MIT-Lizenz'),
  ask('de: reset', 'de', 'Wann wird mein Kontingent zurückgesetzt?', 'am 1. jedes Kalendermonats', 'UTC'),
  ask('de: time zone', 'de', 'In welcher Zeitzone wird der Monat gerechnet?', 'IANA-Zeitzone'),
  ask('de: limit reached', 'de', 'Was passiert, wenn ich mein Limit erreicht habe?', 'Ist das Monatslimit erreicht', 'Retry-After'),
  ask('de: usage', 'de', 'Wie kann ich meinen Verbrauch prüfen?', 'GET /api/usage mit deinem Schlüssel'),
  ask('de: rate-limit headers', 'de', 'Welche Header bekomme ich zum Ratelimit?', 'RateLimit-Policy'),
  ask('de: what counts', 'de', 'Zählen fehlgeschlagene Anfragen auch?', 'Gezählt wird nur'),
  ask('de: session', 'de', 'Was ist eine Session?', 'Eine Session ist ein Gespräch mit Gedächtnis', 'sessionId'),
  ask('de: session window', 'de', 'Wie viele Nachrichten merkt sich eine Session?', 'ein Turn ist eine Nachricht'),
  ask('de: session retention', 'de', 'Wie lange werden Sessions gespeichert?', 'PLAUDER_SESSION_TTL', '30 Tage'),
  ask('de: session delete', 'de', 'Wie kann ich eine Session löschen?', 'DELETE /api/sessions/{sessionId}', 'endgültig'),
  ask('de: session scope', 'de', 'Kann ein anderer Schlüssel meine Session lesen?', 'gehört immer zu einem Schlüssel'),
  ask('de: session id format', 'de', 'Welche Zeichen sind in einer sessionId erlaubt?', '1 bis 128 Zeichen'),
  ask('de: what is a key', 'de', 'Was ist ein API-Schlüssel?', 'Ein API-Schlüssel ist dein Zugang'),
  ask('de: get a key', 'de', 'Wie bekomme ich einen API-Schlüssel?', 'keys create', 'genau einmal angezeigt'),
  ask('de: key expiry', 'de', 'Läuft mein API-Schlüssel irgendwann ab?', 'laufen nicht von selbst ab'),
  ask('de: key format', 'de', 'Wie sieht ein API-Schlüssel aus?', 'plauder_', 'Prüfsumme'),
  ask('de: key security', 'de', 'Darf ich meinen Schlüssel im Browser-JavaScript verwenden?', 'wie ein Passwort'),
  ask('de: key rotate', 'de', 'Wie rotiere ich meinen Schlüssel?', 'keys rotate', 'Die ID bleibt gleich'),
  ask('de: key grace', 'de', 'Wie lange gilt der alte Schlüssel nach dem Rotieren noch?', 'noch 24 Stunden'),
  ask('de: key revoke', 'de', 'Wie widerrufe ich einen Schlüssel?', 'keys revoke'),
  ask('de: lost key', 'de', 'Ich habe meinen Schlüssel verloren.', 'lässt sich nicht wiederherstellen'),
  ask('de: list keys', 'de', 'Wie liste ich alle Schlüssel auf?', 'keys list'),
  ask('de: auth', 'de', 'Wie authentifiziere ich mich bei der API?', 'Authorization: Bearer'),
  ask('de: getting started', 'de', 'Ich bin Entwickler, wie lege ich los?', 'So legst du los'),
  ask('de: endpoints', 'de', 'Welche Endpunkte gibt es?', 'zwei Chat-Endpunkte', '/api/chat-en'),
  ask('de: languages', 'de', 'In welcher Sprache antwortest du?', 'Die Antwortsprache hängt vom Endpunkt ab'),
  ask('de: request format', 'de', 'Wie sieht der JSON-Body einer Anfrage aus?', 'curl -X POST'),
  ask('de: message length', 'de', 'Wie lang darf eine Nachricht sein?', '4000 Zeichen'),
  ask('de: status codes', 'de', 'Welche Statuscodes gibt es?', '200 mit reply: normale Antwort'),
  ask('de: 401', 'de', 'Warum bekomme ich 401?', 'invalid_api_key'),
  ask('de: 429', 'de', 'Was bedeutet Status 429?', '429 (error.code quota_exceeded) heißt'),
  ask('de: 500', 'de', 'Ich bekomme einen Serverfehler 500.', 'internal_error'),
  ask('de: soft errors', 'de', 'Was ist ein Soft-Fehler?', 'Ein Soft-Fehler ist Status 200'),
  ask('de: self-hosting', 'de', 'Wie installiere und starte ich plauder?', 'plauder serve'),
  ask('de: operations', 'de', 'Wie überwache ich, ob der Dienst läuft?', 'GET /healthz'),
  ask('de: admin', 'de', 'Gibt es eine Admin-Oberfläche für Betreiber?', 'PLAUDER_ADMIN_TOKEN'),
  ask('de: core', 'de', 'Kann ich ein eigenes KI-Modell wie Ollama anbinden?', 'PLAUDER_CORE'),
  ask('de: privacy', 'de', 'Was wird gespeichert? Wie steht es um den Datenschutz?', 'Die Logs enthalten weder'),
  ask('de: per-minute limit', 'de', 'Gibt es eine Drosselung pro Minute?', 'Ein Limit pro Minute gibt es nicht'),
  ask('de: token budgets', 'de', 'Gibt es ein Budget für Tokens?', 'Token-Budget'),
];

// biome-ignore format: one row per case reads best as a table
const TOPICS_EN: readonly Conversation[] = [
  ask('en: plans', 'en', 'Which plans are there?', 'There are two plans'),
  ask('en: limits', 'en', 'How many requests can I make per month?', '1000', '5000'),
  ask('en: standard limit', 'en', 'What is the limit of the standard plan?', 'Standard plan gives you 1000'),
  ask('en: plus limit', 'en', 'How many requests does the Plus plan include?', 'Plus plan gives you 5000'),
  ask('en: custom plans', 'en', 'Can operators configure custom plans with higher limits?', 'PLAUDER_PLANS=standard=1000'),
  ask('en: change plan', 'en', 'How do I upgrade my plan?', 'keys set-plan'),
  ask('en: inactive plan', 'en', 'What happens if my plan is inactive?', 'plan_inactive', 'keys activate'),
  ask('en: pricing', 'en', 'How much does plauder cost?', 'MIT licence'),
  ask('en: reset', 'en', 'When does the counter reset?', '1st of every calendar month', 'UTC'),
  ask('en: time zone', 'en', 'Which time zone is used for the month?', 'IANA time zone'),
  ask('en: limit reached', 'en', 'What happens when I hit the limit?', 'Once the monthly limit is reached', 'Retry-After'),
  ask('en: usage', 'en', 'How can I check my usage?', 'GET /api/usage with your key'),
  ask('en: rate-limit headers', 'en', 'Which rate limit headers do you send?', 'RateLimit-Policy'),
  ask('en: what counts', 'en', 'Do failed requests count?', 'Only a successful chat answer'),
  ask('en: session', 'en', 'What is a session?', 'A session is a conversation with memory', 'sessionId'),
  ask('en: session window', 'en', 'How many messages does a session remember?', 'a turn is one message'),
  ask('en: session retention', 'en', 'How long are sessions kept?', 'PLAUDER_SESSION_TTL', '30 days'),
  ask('en: session delete', 'en', 'How do I delete a session?', 'DELETE /api/sessions/{sessionId}', 'for good'),
  ask('en: session scope', 'en', 'Can another key read my session?', 'always belongs to one key'),
  ask('en: session id format', 'en', 'Which characters are allowed in a sessionId?', '1 to 128 characters'),
  ask('en: what is a key', 'en', 'What is an API key for?', 'An API key is your access'),
  ask('en: get a key', 'en', 'How do I get an API key?', 'keys create', 'shown exactly once'),
  ask('en: key expiry', 'en', 'Does my API key expire?', 'do not expire on their own'),
  ask('en: key format', 'en', 'What does an API key look like?', 'plauder_', 'checksum'),
  ask('en: key security', 'en', 'Can I put my key in client-side JavaScript?', 'like a password'),
  ask('en: key rotate', 'en', 'How do I rotate my key?', 'keys rotate', 'The id stays the same'),
  ask('en: key grace', 'en', 'How long does the old key stay valid after rotation?', 'keeps working for 24 hours'),
  ask('en: key revoke', 'en', 'How can a key be revoked?', 'keys revoke'),
  ask('en: lost key', 'en', 'I lost my API key.', 'cannot be recovered'),
  ask('en: list keys', 'en', 'How do I list all keys?', 'keys list'),
  ask('en: auth', 'en', 'How do I authenticate?', 'Authorization: Bearer'),
  ask('en: getting started', 'en', 'Is there a quickstart guide?', 'Here is how to start'),
  ask('en: endpoints', 'en', 'Which endpoints exist?', 'two chat endpoints', '/api/chat-en'),
  ask('en: languages', 'en', 'Which languages do you speak?', 'reply language depends on the endpoint'),
  ask('en: request format', 'en', 'Can you show me an example request with curl?', 'curl -X POST'),
  ask('en: message length', 'en', 'How long can a message be?', '4000 characters'),
  ask('en: status codes', 'en', 'What do the status codes mean?', '200 with reply: a normal answer'),
  ask('en: 401', 'en', 'Why do I get a 401?', 'invalid_api_key'),
  ask('en: 429', 'en', 'What does 429 mean?', 'means the monthly limit'),
  ask('en: 500', 'en', 'I got a 500 internal server error.', 'internal_error'),
  ask('en: soft errors', 'en', 'What is a soft error?', 'A soft error is status 200'),
  ask('en: self-hosting', 'en', 'How do I install and run plauder?', 'plauder serve'),
  ask('en: operations', 'en', 'Is there a health check or Prometheus metrics?', 'GET /healthz'),
  ask('en: admin', 'en', 'How do operators manage keys from the command line?', 'PLAUDER_ADMIN_TOKEN'),
  ask('en: core', 'en', 'Can I connect an LLM like Ollama?', 'PLAUDER_CORE'),
  ask('en: privacy', 'en', 'What data do you store? What about privacy?', 'The logs contain neither'),
  ask('en: per-minute limit', 'en', 'Is there a per-minute rate limit?', 'There is no per-minute limit'),
  ask('en: token budgets', 'en', 'Is there a token budget?', 'token budget'),
];

// biome-ignore format: one row per case reads best as a table
const PHRASING: readonly Conversation[] = [
  ask('de: inflected plural', 'de', 'Wie viele Anfragen sind in den Plänen enthalten?', '1000', '5000'),
  ask('de: compound Anfragelimit', 'de', 'Wann wird das Anfragelimit zurückgesetzt?', 'am 1. jedes Kalendermonats'),
  ask('de: compound Monatslimit', 'de', 'Was passiert beim Monatslimit?', 'Ist das Monatslimit erreicht'),
  ask('de: compound Sitzungsdauer', 'de', 'Wie ist die Sitzungsdauer?', 'PLAUDER_SESSION_TTL'),
  ask('de: compound Schlüsselrotation', 'de', 'Erklär mir die Schlüsselrotation.', 'keys rotate'),
  ask('de: compound Plus-Plan', 'de', 'Wie viele Anfragen hat der Plusplan?', 'Plan Plus hast du 5000'),
  ask('de: typo', 'de', 'Wie viele Anfargen darf ich im Monat stellen?', '1000', '5000'),
  ask('de: typos', 'de', 'Wie rotire ich meinen Schlüsel?', 'keys rotate'),
  ask('de: typo in compound part', 'de', 'Wann wird der Zähler zurückgestezt?', 'am 1. jedes Kalendermonats'),
  ask('de: word order', 'de', 'Im Monat Anfragen wie viele habe ich?', '1000', '5000'),
  ask('de: synonym Kontingent', 'de', 'Wie groß ist mein Kontingent pro Monat?', '1000', '5000'),
  ask('de: synonym Tarif', 'de', 'Welche Tarife bietet ihr an?', 'Es gibt zwei Pläne'),
  ask('de: synonym Sitzung', 'de', 'Was ist eine Sitzung?', 'Eine Session ist ein Gespräch mit Gedächtnis'),
  ask('de: lower case, no umlauts', 'de', 'wie lange bleibt eine sitzung gespeichert', 'PLAUDER_SESSION_TTL'),
  ask('de: transliterated umlaut', 'de', 'Wie bekomme ich einen Schluessel?', 'keys create'),
  ask('en: inflection', 'en', 'Are my sessions stored and for how long?', 'PLAUDER_SESSION_TTL'),
  ask('en: typo', 'en', 'How many reqeusts do I get per month?', '1000', '5000'),
  ask('en: typos', 'en', 'How do I rotaet my key?', 'keys rotate'),
  ask('en: word order', 'en', 'Per month, the limit of requests is what?', '1000', '5000'),
  ask('en: synonym quota', 'en', 'What is my monthly quota?', '1000', '5000'),
  ask('en: synonym conversation', 'en', 'Do you remember the conversation?', 'A session is a conversation with memory'),
  ask('en: contraction', 'en', "What's the Plus plan's limit?", 'Plus plan gives you 5000'),
  ask('en: shouting', 'en', 'HOW DO I GET AN API KEY???', 'keys create'),
];

/** Questions as newcomers asked them while the knowledge base was written. */
// biome-ignore format: one row per case reads best as a table
const NEWCOMER_QUESTIONS: readonly Conversation[] = [
  ask('de: separable verb "läuft ... ab"', 'de', 'Läuft mein API-Key ab?', 'laufen nicht von selbst ab'),
  ask('de: history as "Verlauf"', 'de', 'Kann ich meinen Verlauf löschen?', 'DELETE /api/sessions/{sessionId}'),
  ask('de: database', 'de', 'Welche Datenbank braucht plauder?', 'SQLite'),
  ask('de: what happens without a session', 'de', 'Was passiert ohne sessionId?', 'Ohne sessionId wird nichts gespeichert'),
  ask('de: what time the counter resets', 'de', 'Um wie viel Uhr wird zurückgesetzt?', '0:00 Uhr'),
  ask('de: a status code with a generic verb', 'de', 'Bekomme ich einen 429 Fehler?', 'quota_exceeded'),
  ask('de: price of a plan', 'de', 'Was kostet der Plus-Plan?', 'entscheidet der Betreiber'),
  ask('de: compound Sprachmodell', 'de', 'Welches Sprachmodell steckt dahinter?', 'PLAUDER_CORE'),
  ask('de: remaining requests', 'de', 'Wie viele Anfragen habe ich noch?', 'GET /api/usage'),
  ask('en: stolen key', 'en', 'My key was stolen, what should I do?', 'keys rotate'),
  ask('en: history', 'en', 'Can I delete my history?', 'DELETE /api/sessions/{sessionId}'),
  ask('en: ran out', 'en', 'I ran out of requests, what now?', 'Retry-After'),
  ask('en: reply in the other language', 'en', 'Why is the answer in German?', 'reply language depends on the endpoint'),
  ask('en: "session id" as two words', 'en', 'Do I need a session id?', 'sessionId'),
  ask('en: key stopped working', 'en', 'My key stopped working', 'invalid_api_key'),
  ask('en: several keys', 'en', 'Can I have multiple keys?', 'several per person'),
  ask('en: "time zone" as two words', 'en', 'In which time zone is the month counted?', 'IANA time zone'),
];

const CROSS_LANGUAGE: readonly Conversation[] = [
  {
    name: 'English question on the German endpoint gets a German answer',
    language: 'de',
    turns: [
      {
        message: 'How many requests do I get per month?',
        includes: ['Anfragen pro Monat'],
        excludes: ['requests'],
      },
    ],
  },
  {
    name: 'German question on the English endpoint gets an English answer',
    language: 'en',
    turns: [
      {
        message: 'Wie lange werden Sessions gespeichert?',
        includes: ['30 days'],
        excludes: ['Tage'],
      },
    ],
  },
  {
    name: 'English small talk on the German endpoint is answered in German',
    language: 'de',
    turns: [{ message: 'Thank you!', includes: ['Gern geschehen'] }],
  },
  {
    name: 'an unknown German question on the English endpoint gets the English fallback',
    language: 'en',
    turns: [
      { message: 'Wie wird das Wetter morgen?', includes: [DONT_KNOW_EN], excludes: ['leider'] },
    ],
  },
  {
    name: 'a session may switch endpoints and keeps its memory',
    language: 'de',
    turns: [
      { message: 'Ich heiße Jonas.', includes: ['Jonas'] },
      { message: 'What is my name?', language: 'en', includes: ['Your name is Jonas'] },
    ],
  },
];

// biome-ignore format: one row per case reads best as a table
const SMALL_TALK: readonly Conversation[] = [
  ask('de: greeting', 'de', 'Hallo!', 'Hallo!', 'Themen'),
  ask('de: greeting, other form', 'de', 'Guten Morgen', 'Hallo!'),
  ask('de: how are you', 'de', "Wie geht's dir?", 'mir geht es gut'),
  ask('de: thanks', 'de', 'Vielen Dank!', 'Gern geschehen'),
  ask('de: goodbye', 'de', 'Tschüss!', 'Tschüss', 'nächsten Mal'),
  ask('de: who are you', 'de', 'Wer bist du?', 'Ich bin plauder'),
  ask('de: what is plauder', 'de', 'Was ist plauder?', 'Ich bin plauder'),
  ask('de: what can you do', 'de', 'Was kannst du?', 'Ich beantworte Fragen zu diesen Themen'),
  ask('de: help', 'de', 'Hilfe', 'Stell mir deine Frage'),
  ask('de: greeting with typo', 'de', 'Halllo', 'Hallo!'),
  ask('en: greeting', 'en', 'Hi there', 'Hello!', 'topics'),
  ask('en: how are you', 'en', 'How are you?', "I'm doing well"),
  ask('en: thanks with typo', 'en', 'thnaks a lot', "You're welcome"),
  ask('en: goodbye', 'en', 'Bye!', 'Goodbye'),
  ask('en: who are you', 'en', 'Who are you?', "I'm plauder"),
  ask('en: are you a bot', 'en', 'Are you a bot?', "I'm plauder"),
  ask('en: what can you do', 'en', 'What can you do?', 'I can answer questions about these topics'),
  ask('en: help', 'en', 'help', 'Just ask your question'),
  ask('de: greeting plus question', 'de', 'Hallo, wie viele Anfragen habe ich im Monat?', 'Hallo!', '1000'),
  ask('en: thanks plus question', 'en', 'Thanks! And how do I revoke a key?', "You're welcome", 'keys revoke'),
  ask('de: only punctuation', 'de', '???', 'Stell mir deine Frage'),
  ask('en: only an emoji', 'en', '👋', 'Just ask your question'),
];

const MEMORY: readonly Conversation[] = [
  {
    name: 'de: remembers the name from "Ich heiße"',
    language: 'de',
    turns: [
      { message: 'Ich heiße Anna.', includes: ['Freut mich, Anna!'] },
      { message: 'Wie viele Anfragen habe ich im Monat?', includes: ['1000'] },
      { message: 'Wie heiße ich?', includes: ['Du heißt Anna'] },
      { message: 'Danke!', includes: ['Gern geschehen, Anna'] },
      { message: 'Tschüss', includes: ['Tschüss, Anna'] },
    ],
  },
  {
    name: 'de: "Mein Name ist" with a question in the same message',
    language: 'de',
    turns: [
      {
        message: 'Hallo, mein Name ist Anna Schmidt. Wie bekomme ich einen Schlüssel?',
        includes: ['Freut mich, Anna!', 'keys create'],
      },
      { message: 'Weißt du noch, wie ich heiße?', includes: ['Anna Schmidt'] },
    ],
  },
  {
    name: 'de: "Ich bin" with a capitalised name, and a greeting by name',
    language: 'de',
    turns: [
      { message: 'Hi, ich bin Lena', includes: ['Freut mich, Lena!'] },
      { message: 'Hallo', includes: ['Hallo Lena!'] },
      { message: 'Wie ist mein Name?', includes: ['Du heißt Lena'] },
    ],
  },
  {
    name: 'de: "Ich bin neu hier" is not a name',
    language: 'de',
    turns: [
      { message: 'Ich bin neu hier.', excludes: ['Freut mich'] },
      { message: 'Wie heiße ich?', includes: ['Deinen Namen kenne ich noch nicht'] },
    ],
  },
  {
    name: 'de: the newest name wins',
    language: 'de',
    turns: [
      { message: 'Nenn mich Max.', includes: ['Freut mich, Max!'] },
      { message: 'Nenn mich lieber Moritz. Ich heiße Moritz.', includes: ['Freut mich, Moritz!'] },
      { message: 'Wie heiße ich?', includes: ['Du heißt Moritz'], excludes: ['Max'] },
    ],
  },
  {
    name: 'en: "My name is"',
    language: 'en',
    turns: [
      { message: 'My name is Anna', includes: ['Nice to meet you, Anna!'] },
      { message: 'What is my name?', includes: ['Your name is Anna'] },
    ],
  },
  {
    name: 'en: "I\'m" and "Call me"',
    language: 'en',
    turns: [
      { message: "Hi, I'm Sam", includes: ['Nice to meet you, Sam!'] },
      { message: 'Call me Samantha.', includes: ['Nice to meet you, Samantha!'] },
      { message: "What's my name?", includes: ['Your name is Samantha'] },
      { message: 'Thanks, bye!', includes: ['Goodbye, Samantha'] },
    ],
  },
  {
    name: 'en: "I\'m looking for ..." is not a name',
    language: 'en',
    turns: [
      {
        message: "I'm looking for the rate limit headers",
        includes: ['RateLimit-Policy'],
        excludes: ['Nice to meet you'],
      },
      { message: 'What is my name?', includes: ["I don't know your name yet"] },
    ],
  },
  {
    name: 'de: no memory without a session',
    language: 'de',
    session: false,
    turns: [
      { message: 'Ich heiße Anna.', includes: ['Freut mich, Anna!'] },
      {
        message: 'Wie heiße ich?',
        includes: ['Deinen Namen kenne ich noch nicht'],
        excludes: ['Anna'],
      },
    ],
  },
  {
    name: 'en: "My name is not ..." states no name',
    language: 'en',
    turns: [
      {
        message: 'My name is not important. What is the Plus limit?',
        includes: ['5000'],
        excludes: ['Nice to meet you'],
      },
      { message: 'What is my name?', includes: ["I don't know your name yet"] },
    ],
  },
  {
    name: 'en: no memory without a session',
    language: 'en',
    session: false,
    turns: [
      { message: 'My name is Anna.', includes: ['Nice to meet you, Anna!'] },
      { message: 'What is my name?', includes: ["I don't know your name yet"], excludes: ['Anna'] },
    ],
  },
];

const FOLLOW_UPS: readonly Conversation[] = [
  {
    name: 'de: "Und im Plus-Plan?" after a question about limits',
    language: 'de',
    turns: [
      { message: 'Wie viele Anfragen habe ich im Monat?', includes: ['1000'] },
      { message: 'Und im Plus-Plan?', includes: ['5000'], excludes: ['Es gibt zwei Pläne'] },
      { message: 'Und im Standard-Plan?', includes: ['Plan Standard hast du 1000'] },
    ],
  },
  {
    name: 'en: "And on the Plus plan?" after a question about limits',
    language: 'en',
    turns: [
      { message: 'What is the monthly limit?', includes: ['1000'] },
      { message: 'And on the Plus plan?', includes: ['Plus plan gives you 5000'] },
      { message: 'What about standard?', includes: ['Standard plan gives you 1000'] },
    ],
  },
  {
    name: 'de: "Und wie lange?" after a question about sessions',
    language: 'de',
    turns: [
      { message: 'Was ist eine Session?', includes: ['sessionId'] },
      { message: 'Und wie lange wird sie gespeichert?', includes: ['30 Tage'] },
    ],
  },
  {
    name: 'de: bare "Und wie lange?" after a question about sessions',
    language: 'de',
    turns: [
      { message: 'Was ist eine Session?', includes: ['sessionId'] },
      { message: 'Und wie lange?', includes: ['PLAUDER_SESSION_TTL'] },
    ],
  },
  {
    name: 'en: "And how long?" after a question about sessions',
    language: 'en',
    turns: [
      { message: 'Tell me about sessions.', includes: ['sessionId'] },
      { message: 'And how long?', includes: ['30 days'] },
    ],
  },
  {
    name: 'de: "Und wie lange?" after rotation asks about the grace period',
    language: 'de',
    turns: [
      { message: 'Wie rotiere ich einen Schlüssel mit Übergangsfrist?', includes: ['keys rotate'] },
      { message: 'Und wie lange gilt der alte dann?', includes: ['24 Stunden'] },
    ],
  },
  {
    name: 'en: follow-up on status codes',
    language: 'en',
    turns: [
      { message: 'What does status 401 mean?', includes: ['invalid_api_key'] },
      { message: 'And 429?', includes: ['quota_exceeded'] },
      { message: 'What about 500?', includes: ['internal_error'] },
    ],
  },
  {
    name: 'de: a small-talk turn in between does not lose the topic',
    language: 'de',
    turns: [
      { message: 'Wie viele Anfragen habe ich im Monat?', includes: ['1000'] },
      { message: 'Danke!', includes: ['Gern geschehen'] },
      { message: 'Und im Plus-Plan?', includes: ['5000'] },
    ],
  },
  {
    name: 'de: a new full question changes the topic',
    language: 'de',
    turns: [
      { message: 'Was ist eine Session?', includes: ['sessionId'] },
      { message: 'Wie bekomme ich einen Schlüssel?', includes: ['keys create'] },
    ],
  },
  {
    name: 'de: "Und wie lange?" after rotating a key asks about the grace period',
    language: 'de',
    turns: [
      { message: 'Wie rotiere ich einen Schlüssel?', includes: ['keys rotate'] },
      { message: 'Und wie lange?', includes: ['24 Stunden'] },
    ],
  },
  {
    name: 'de: without a session the same follow-up has no context',
    language: 'de',
    session: false,
    turns: [
      { message: 'Wie rotiere ich einen Schlüssel?', includes: ['keys rotate'] },
      { message: 'Und wie lange?', excludes: ['24 Stunden'] },
    ],
  },
];

// biome-ignore format: one row per case reads best as a table
const FALLBACK: readonly Conversation[] = [
  ask('de: unknown question offers topics', 'de', 'Was ist die Hauptstadt von Frankreich?', DONT_KNOW_DE, 'Limits der Pläne', 'Statuscodes'),
  ask('en: unknown question offers topics', 'en', 'What is the capital of France?', DONT_KNOW_EN, 'plan limits', 'status codes'),
  ask('de: gibberish', 'de', 'xqzv blorf wumpel', DONT_KNOW_DE),
  ask('en: off-topic with one known word', 'en', 'Can I order pizza with plauder?', DONT_KNOW_EN),
  ask('de: a vague question suggests close topics', 'de', 'Schlüssel für mein Fahrrad und mein Auto?', DONT_KNOW_DE, 'Meintest du vielleicht'),
  ask('en: a vague question suggests close topics', 'en', 'Keys for my bike and my car?', DONT_KNOW_EN, 'Did you mean'),
  ask('de: one word is enough when it is clear', 'de', 'Pläne?', 'Es gibt zwei Pläne'),
  ask('en: one word is enough when it is clear', 'en', 'API key?', 'An API key is your access'),
];

export const conversations: readonly Conversation[] = [
  ...TOPICS_DE,
  ...TOPICS_EN,
  ...PHRASING,
  ...NEWCOMER_QUESTIONS,
  ...CROSS_LANGUAGE,
  ...SMALL_TALK,
  ...MEMORY,
  ...FOLLOW_UPS,
  ...FALLBACK,
];
