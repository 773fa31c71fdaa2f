/**
 * @module test/core/builtin/suite/held-out
 * The held-out part of the conversation suites: conversations written from what users ask,
 * before the knowledge bases and the core were tuned for them, and never tuned on since.
 * The development part (`plauder-suite.ts`, `domain-suites.ts`, `dev-suite.ts`) may be
 * tuned on; this part only measures how well the core does on what it has not seen.
 * When a turn here fails, fix the core or the knowledge base in general terms (and add
 * a similar turn to the development part), never by adding this turn's words.
 *
 * Each turn names the facts its reply must carry, never a wording (see `checks.ts`).
 */
import type { Expectation } from './checks.js';
import { conversationBuilders, type PlayableConversation } from './run-suite.js';

export const HELD_OUT_CATEGORIES = [
  'knowledge',
  'service features',
  'follow-ups',
  'typos and slang',
  'long stories',
  'rudeness and complaints',
  'dialogue acts',
  'out of scope',
] as const;
export type HeldOutCategory = (typeof HELD_OUT_CATEGORIES)[number];

type Conversation = PlayableConversation<HeldOutCategory>;
const { t, one, conv } = conversationBuilders<HeldOutCategory>();

/** Thanks and insults are never answered with "I don't know". */
const NO_FALLBACK: Expectation = { kind: 'answer' };
const NOT_WELCOME_AND_UNKNOWN_EN: Expectation = { kind: 'answer', not: [/don't know/i] };
const NOT_WELCOME_AND_UNKNOWN_DE: Expectation = { kind: 'answer', not: [/weiß ich/i] };

export const PLAUDER_HELD_OUT: readonly Conversation[] = [
  // Knowledge: the core topics, asked the way people ask.
  one('knowledge', 'en', 'how many calls can i make a month on standard', {
    facts: [/\b1[.,]?000\b/],
  }),
  one(
    'knowledge',
    'de',
    'Ab wann kann ich wieder Anfragen schicken, wenn das Monatslimit weg ist?',
    {
      anyOf: [/1\. /, /ersten/, /Monatsersten/],
    },
  ),
  one('knowledge', 'en', 'do failed requests eat into my quota?', {
    anyOf: [/(do|does) not count/, /not counted/, /only[^.]*successful/i],
  }),
  one('knowledge', 'de', 'Wie lange merkt ihr euch einen Chatverlauf?', { facts: [/30 Tage/] }),
  one('knowledge', 'en', 'Where do I get an API key from?', { facts: [/keys create/] }),
  one('knowledge', 'de', 'Werden meine Nachrichten irgendwo im Klartext gespeichert?', {
    anyOf: [/verschlüsselt/i, /AES/, /Klartext/],
  }),

  // Features the README documents.
  one('service features', 'en', 'Can I get the answer streamed token by token?', {
    anyOf: [/text\/event-stream/, /Server-Sent Events/, /"stream": ?true/],
  }),
  one('service features', 'de', 'Kann ich plauder mit dem OpenAI SDK benutzen?', {
    facts: [/\/v1/],
  }),
  one('service features', 'en', 'does it work with the openai python client?', {
    facts: [/\/v1/],
  }),
  one('service features', 'en', 'Can my agent use plauder as an MCP tool?', { facts: [/\/mcp/] }),
  one(
    'service features',
    'de',
    'Was passiert, wenn ich eine Anfrage nach einem Timeout wiederhole?',
    {
      facts: [/Idempotency-Key/],
    },
  ),
  one('service features', 'en', 'how do I avoid being charged twice when my client retries?', {
    facts: [/Idempotency-Key/],
  }),
  one('service features', 'en', 'can I limit how many requests a key makes per minute?', {
    anyOf: [/\/minute/, /per minute/],
  }),
  one(
    'service features',
    'de',
    'Kann plauder mir Bescheid geben, wenn ein Kunde 80 % verbraucht hat?',
    {
      anyOf: [/quota\.warning/, /Webhook/i, /PLAUDER_WEBHOOK_URL/],
    },
  ),
  one('service features', 'en', 'I already have a Rasa bot, can I put plauder in front of it?', {
    facts: [/PLAUDER_RASA_URL/],
  }),
  one('service features', 'de', 'Kann ich ein eigenes Sprachmodell wie Ollama anschließen?', {
    anyOf: [/PLAUDER_CORE=openai/, /PLAUDER_OPENAI_BASE_URL/],
  }),
  one('service features', 'en', 'Is there some admin UI where I can see all keys?', {
    facts: [/\/admin\//],
  }),
  one('service features', 'en', 'How many requests can one key have running at the same time?', {
    facts: [/\b16\b/],
  }),

  // Follow-ups: the topic and its attribute carry over.
  conv(
    'follow-ups',
    'de',
    t('Was ist eine Session?', { facts: [/sessionId/] }),
    t('und wie lange?', { facts: [/30 Tage/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('How many requests does the plus plan give me?', { facts: [/\b5[.,]?000\b/] }),
    t('what about the other one?', { facts: [/\b1[.,]?000\b/], not: [/set-plan ID plus/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('How do I rotate a key?', { facts: [/keys rotate/] }),
    t('and can the old one keep working for a bit?', { facts: [/--grace/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Was bedeutet 429?', { anyOf: [/quota_exceeded/, /Limit/] }),
    t('und 401?', { anyOf: [/invalid_api_key/, /Schlüssel/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('Can I stream replies?', { anyOf: [/text\/event-stream/, /Server-Sent Events/] }),
    t('does that work on the /v1 endpoint too?', { anyOf: [/stream/i] }),
  ),

  // Typos and slang.
  one('typos and slang', 'en', 'how do i rotaet my api kye', { facts: [/keys rotate/] }),
  one('typos and slang', 'en', 'whats the montly limt on plus', { facts: [/\b5[.,]?000\b/] }),
  one('typos and slang', 'de', 'wie lösch ich ne sesion', { facts: [/DELETE \/api\/sessions/] }),
  one('typos and slang', 'en', 'yo my key got leaked wat do i do', {
    anyOf: [/keys rotate/, /keys revoke/],
  }),
  one('typos and slang', 'de', 'wann wird das kontigent zurückgesezt', { facts: [/UTC/] }),

  // Long stories with the question inside.
  one(
    'long stories',
    'en',
    "So we're a small team building a support widget for our shop, and our backend calls your API from a cron job every night to summarise tickets. Last night it suddenly stopped working and the logs are full of 429s. Why would that happen?",
    { facts: [/429/], anyOf: [/quota_exceeded/, /limit/i] },
  ),
  one(
    'long stories',
    'de',
    'Hallo zusammen, ich bin neu hier und soll für unsere Firma einen Chatbot anbinden. Mein Chef meinte, wir sollen plauder nehmen, weil es selbst gehostet ist. Ich habe schon Node installiert. Wie starte ich das Ganze eigentlich?',
    { facts: [/npm ci/] },
  ),
  one(
    'long stories',
    'en',
    'Quick context: our mobile app keeps a conversation open with the assistant, and users complained that it forgets what they said after a while. We do send the same sessionId each time. How many earlier messages does the bot actually see?',
    { facts: [/\b20\b/] },
  ),

  // Rudeness and complaints, with and without a question inside.
  one('rudeness and complaints', 'en', 'you are useless', NO_FALLBACK),
  one(
    'rudeness and complaints',
    'de',
    'Du bist echt der dümmste Bot, den ich je gesehen habe.',
    NO_FALLBACK,
  ),
  one(
    'rudeness and complaints',
    'en',
    'this is ridiculous, I keep getting 401 for no reason, what is wrong with your api?',
    { facts: [/(401|invalid_api_key)/] },
  ),
  one(
    'rudeness and complaints',
    'de',
    'Das ist doch Mist! Seit heute morgen kommt nur 429. Wann geht es wieder?',
    { anyOf: [/1\. /, /ersten/, /Retry-After/] },
  ),

  // Dialogue acts: thanks, questions about the bot, meta questions.
  conv(
    'dialogue acts',
    'en',
    t('How long are sessions kept?', { facts: [/30 days/] }),
    t('thanks I guess', NOT_WELCOME_AND_UNKNOWN_EN),
  ),
  one('dialogue acts', 'de', 'ok danke, hat geholfen', NOT_WELCOME_AND_UNKNOWN_DE),
  one('dialogue acts', 'en', 'Are you a real person?', {
    anyOf: [/assistant/i, /not a (human|person)/i],
    not: [/hash/i],
  }),
  one('dialogue acts', 'de', 'Bist du ein echter Mensch oder ein Programm?', {
    anyOf: [/Assistent/, /Programm/, /kein Mensch/],
  }),
  one('dialogue acts', 'en', 'What can plauder do?', { anyOf: [/keys?/i], not: [/full sentence/] }),
  one('dialogue acts', 'de', 'Was kann plauder alles?', { anyOf: [/Schlüssel/] }),
  one('dialogue acts', 'en', 'what can you help me with?', { anyOf: [/topics/i, /keys?/i] }),

  // Out of scope: the polite fallback, never a wrong answer.
  one('out of scope', 'en', 'Who won the last Super Bowl?', { kind: 'fallback' }),
  one('out of scope', 'de', 'Kannst du mir ein Rezept für Pfannkuchen geben?', {
    kind: 'fallback',
  }),
  one('out of scope', 'en', "What's the best pizza place in Berlin?", { kind: 'fallback' }),
  one('out of scope', 'de', 'Wie hoch ist der Eiffelturm?', { kind: 'fallback' }),
];

/** The coffee shop of `fixtures/shop.kb`. */
export const SHOP_HELD_OUT: readonly Conversation[] = [
  one('knowledge', 'en', 'What payment options do you have?', { facts: [/PayPal/] }),
  one('knowledge', 'de', 'Wie frisch ist der Kaffee wenn er ankommt?', { facts: [/7 Tage/] }),
  one('knowledge', 'en', 'how can i reach customer service by phone', { facts: [/555 0100/] }),
  conv(
    'follow-ups',
    'en',
    t('How long does delivery to Austria take?', { facts: [/3 to\s+5/] }),
    t('how much does that cost?', { facts: [/9\.90/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Kann ich meine Bestellung noch stornieren?', { facts: [/Kundenkonto/] }),
    t('und wenn sie schon verschickt ist?', { anyOf: [/Rücksendung/, /zurückschicken/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('Can I return a grinder?', { facts: [/30 days/] }),
    t('and how long until I get the money?', { facts: [/5 working days/] }),
  ),
  one('typos and slang', 'de', 'versandkostn nach östereich?', { facts: [/9,90/] }),
  one('typos and slang', 'en', 'do u guys take paypal', { facts: [/PayPal/] }),
  one(
    'long stories',
    'en',
    "I ordered a bag of the Ethiopian beans for my dad's birthday on Monday, he's really into filter coffee. The birthday is on Saturday and I'm getting a bit nervous. How long does shipping normally take?",
    { facts: [/1 to 3 working days/] },
  ),
  one(
    'rudeness and complaints',
    'de',
    'Echt jetzt, das Paket ist immer noch nicht da!! Wo bleibt meine Bestellung?',
    { anyOf: [/Sendungsnummer/, /hallo@kaffeekiste/] },
  ),
  one('rudeness and complaints', 'en', 'worst shop ever', NO_FALLBACK),
  one('dialogue acts', 'en', 'thanks, that helps', NOT_WELCOME_AND_UNKNOWN_EN),
  one('dialogue acts', 'de', 'Bist du ein Mensch?', { anyOf: [/Kiki/, /Assistentin/] }),
  one('dialogue acts', 'en', 'what can you do?', { anyOf: [/shipping/i, /delivery/i] }),
  one('out of scope', 'en', 'Do you sell tea?', { kind: 'any', not: [/PayPal/] }),
  one('out of scope', 'de', 'Wer wird Fußballweltmeister?', { kind: 'fallback' }),
];

/** The IT helpdesk of `fixtures/helpdesk.kb`. */
export const HELPDESK_HELD_OUT: readonly Conversation[] = [
  one('knowledge', 'en', 'I need a new keyboard, how do I get one?', {
    facts: [/service portal/],
  }),
  one('knowledge', 'de', 'Wie viele Zeichen muss das neue Passwort haben?', { facts: [/12/] }),
  one('knowledge', 'en', 'what is the wifi password for visitors', { facts: [/Firma-Gast/] }),
  conv(
    'follow-ups',
    'en',
    t('How do I set up the VPN?', { facts: [/FortiClient/] }),
    t('what is the server address?', { facts: [/vpn\.intern\.example/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Wie bestelle ich einen neuen Laptop?', { facts: [/Serviceportal/] }),
    t('und wie lange dauert das?', { anyOf: [/Woche/] }),
  ),
  one('typos and slang', 'en', 'cant log in, acount locked??', { facts: [/15 minutes/] }),
  one('typos and slang', 'de', 'druker geht nich', { anyOf: [/print\.intern\.example/, /2200/] }),
  one(
    'long stories',
    'en',
    "Morning. I started here last week and my manager told me I'd get everything set up, but I'm working from home today and can't reach any of the internal sites. Someone mentioned a VPN? How do I connect?",
    { facts: [/FortiClient/] },
  ),
  one('rudeness and complaints', 'en', 'this stupid printer jammed AGAIN, who do I call?', {
    facts: [/2200/],
  }),
  one('rudeness and complaints', 'de', 'Ihr seid alle unfähig.', NO_FALLBACK),
  one('dialogue acts', 'de', 'danke dir!', NOT_WELCOME_AND_UNKNOWN_DE),
  one('dialogue acts', 'en', 'are you a bot?', { anyOf: [/Hilda/] }),
  one('dialogue acts', 'en', 'What can you help with?', { anyOf: [/password/i, /VPN/] }),
  one('out of scope', 'en', 'Can you order me a pizza?', { kind: 'fallback' }),
  one('out of scope', 'de', 'Wie ist das Wetter in Hamburg?', { kind: 'fallback' }),
];
