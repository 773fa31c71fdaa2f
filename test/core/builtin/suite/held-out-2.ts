/**
 * @module test/core/builtin/suite/held-out-2
 * The second held-out part: fresh conversations in users' words, written from the README,
 * `docs/` and the contents of the three knowledge bases before the core was tuned again.
 * It has been looked at while tuning since the third part (`held-out-3.ts`) was written, so
 * like the first (`held-out.ts`) it counts as development now; only the third tells whether
 * a change generalizes. When a turn here fails, fix the core or a knowledge base in general
 * terms, never by adding this turn's words.
 *
 * Each turn names the facts its reply must carry, never a wording (see `checks.ts`).
 */
import type { Expectation } from './checks.js';
import { conversationBuilders, type PlayableConversation } from './run-suite.js';

export const HELD_OUT_2_CATEGORIES = [
  'knowledge',
  'service features',
  'follow-ups',
  'typos and slang',
  'long stories',
  'rudeness and complaints',
  'dialogue acts',
  'out of scope',
  'multi-intent',
] as const;
export type HeldOut2Category = (typeof HELD_OUT_2_CATEGORIES)[number];

type Conversation = PlayableConversation<HeldOut2Category>;
const { t, one, conv } = conversationBuilders<HeldOut2Category>();

/** Greetings, thanks, goodbyes and insults are never answered with "I don't know". */
const NOT_UNKNOWN_EN: Expectation = { kind: 'answer', not: [/don't know/i] };
const NOT_UNKNOWN_DE: Expectation = { kind: 'answer', not: [/weiß ich/i] };
const OUT_OF_SCOPE: Expectation = { kind: 'fallback' };

const STANDARD = /\b1[.,]?000\b/;
const PLUS = /\b5[.,]?000\b/;

export const PLAUDER_HELD_OUT_2: readonly Conversation[] = [
  // Knowledge: the shipped sample's topics, asked the way people ask.
  one('knowledge', 'en', "what's the monthly cap on the plus tier?", { facts: [PLUS] }),
  one('knowledge', 'de', 'Wie viele Nachrichten darf ich im Standard-Tarif pro Monat schicken?', {
    facts: [STANDARD],
  }),
  one('knowledge', 'en', 'if the bot errors out with a 500, is that request still billed?', {
    anyOf: [/(do|does) not count/i, /not counted/i],
  }),
  one('knowledge', 'de', 'Ich hab meinen Key verloren, was jetzt?', {
    anyOf: [/Hash/, /keys rotate/],
  }),
  one('knowledge', 'en', 'when exactly does my usage go back to zero', { facts: [/1st/] }),
  one('knowledge', 'de', 'Kann ich irgendwo sehen, wie viele Anfragen ich noch habe?', {
    facts: [/\/api\/usage/],
  }),
  one('knowledge', 'en', 'how long do you keep my chat history around?', { facts: [/30 days/] }),
  one('knowledge', 'de', 'Wie lang darf eine einzelne Nachricht maximal sein?', {
    facts: [/\b4[.,]?000\b/],
  }),
  one('knowledge', 'en', 'Do API keys expire after a while?', {
    anyOf: [/not expire/i, /valid until/i],
  }),
  one('knowledge', 'de', 'In welcher Zeitzone wird der Monat gezählt?', { facts: [/UTC/] }),
  one('knowledge', 'de', 'Wie viele frühere Nachrichten sieht der Bot in einer Session?', {
    facts: [/\b20\b/],
  }),
  // A German question on the English endpoint is answered in English.
  one('knowledge', 'en', 'Wie viele Anfragen habe ich im Plus-Plan?', { facts: [PLUS] }),

  // Features the README and docs/ describe.
  one('service features', 'en', "can I get the reply word by word while it's generated?", {
    anyOf: [/event-stream/, /Server-Sent Events/],
  }),
  one('service features', 'de', 'Ich will LangChain mit dem OpenAI-SDK dranhängen, geht das?', {
    facts: [/\/v1/],
  }),
  one('service features', 'en', 'can claude code or cursor talk to this thing?', {
    facts: [/\/mcp/],
  }),
  one(
    'service features',
    'de',
    'Wie verhindere ich, dass eine wiederholte Anfrage doppelt gezählt wird?',
    { facts: [/Idempotency-Key/] },
  ),
  one('service features', 'en', 'does plauder notify me with a webhook when a key runs low?', {
    anyOf: [/quota\.warning/, /PLAUDER_WEBHOOK_URL/],
  }),
  one('service features', 'de', 'Kann ich ein lokales Modell mit Ollama als Kern nehmen?', {
    anyOf: [/PLAUDER_CORE=openai/, /PLAUDER_OPENAI_BASE_URL/],
  }),
  one('service features', 'en', 'we already have a Rasa assistant, can plauder sit in front?', {
    facts: [/PLAUDER_CORE=rasa|PLAUDER_RASA_URL/],
  }),
  one('service features', 'de', 'Gibt es eine Weboberfläche, um Schlüssel zu verwalten?', {
    facts: [/\/admin/],
  }),
  one('service features', 'en', 'Can I run three instances behind nginx?', {
    facts: [/PostgreSQL/],
  }),
  one('service features', 'de', 'Kann ich die API direkt aus meinem React-Frontend aufrufen?', {
    facts: [/CORS/],
  }),
  one('service features', 'en', 'how many requests can one key have in flight at once?', {
    facts: [/\b16\b/],
  }),
  one('service features', 'en', "where's the openapi spec?", { facts: [/openapi\.json/] }),
  one('service features', 'de', 'Gibt es einen Health-Check für Kubernetes?', {
    anyOf: [/healthz/, /readyz/],
  }),
  one('service features', 'en', 'How do I check the signature of your webhooks on my side?', {
    anyOf: [/HMAC/, /standardwebhooks/i, /webhook-signature/],
  }),

  // Follow-ups: the topic and its attribute carry over.
  conv(
    'follow-ups',
    'en',
    t('How many requests does the Standard plan include?', { facts: [STANDARD] }),
    t('and plus?', { facts: [PLUS] }),
    t('when does that reset?', { facts: [/1st/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Wie lange bleibt eine Session gespeichert?', { facts: [/30 Tage/] }),
    t('und kann ich sie vorher selbst löschen?', { facts: [/DELETE/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('How do I rotate a key?', { facts: [/keys rotate/] }),
    t('and does the old one keep working for a bit?', { anyOf: [/grace/, /24 hours/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Was heißt Status 429?', { anyOf: [/quota_exceeded/, /Monatslimit/] }),
    t('und 401?', { anyOf: [/invalid_api_key/, /Schlüssel fehlt/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('what does a session do?', { facts: [/sessionId/] }),
    t('how many turns does it remember?', { facts: [/\b20\b/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Kann ich mir die Antworten streamen lassen?', { anyOf: [/event-stream/, /Server-Sent/] }),
    t('geht das auch über /v1?', { facts: [/\/v1/] }),
  ),

  // Typos and slang.
  one('typos and slang', 'en', 'hw many reqests do i get on standrd', { facts: [STANDARD] }),
  one('typos and slang', 'de', 'wie lnage werden sesions gespeichert', { facts: [/30 Tage/] }),
  one('typos and slang', 'en', 'my api kee got leakd what now??', { facts: [/rotate/] }),
  one('typos and slang', 'en', 'yo whats the limit per month lol', { facts: [STANDARD, PLUS] }),
  one('typos and slang', 'de', 'wann wird der zähler zurückgestzt', { facts: [/1\. /] }),
  one('typos and slang', 'en', 'can u stream teh answer', {
    anyOf: [/event-stream/, /Server-Sent/],
  }),
  one('typos and slang', 'de', 'krieg dauernd 401 obwohl der key stimmt', {
    anyOf: [/invalid_api_key/, /Authorization/],
  }),
  one('typos and slang', 'en', 'wat happens when i hit my cap', { facts: [/429/] }),

  // Long stories with the question somewhere inside.
  one(
    'long stories',
    'en',
    "Hey, so I'm building a little Discord bot for my gaming group and hooked it up to plauder last week. Everything worked fine and we've been chatting with it a lot. But since this morning every message comes back with a 429 and my friends are annoyed. What does that mean and when will it work again?",
    { facts: [/429/, /1st/] },
  ),
  one(
    'long stories',
    'de',
    'Ich betreue bei uns im Verein die Webseite und wollte einen kleinen Chat einbauen. Der Kollege, der das eingerichtet hat, ist leider nicht mehr da, und ich habe nur noch die Doku. Wie bekomme ich überhaupt einen API-Schlüssel?',
    { facts: [/keys create/] },
  ),
  one(
    'long stories',
    'en',
    "I run plauder at work for an internal tool. Our security team went through everything last week and asked me a bunch of questions I couldn't answer. Do you store the messages people send, and are they encrypted?",
    { facts: [/encrypted/] },
  ),
  one(
    'long stories',
    'de',
    'Wir haben gestern unsere App veröffentlicht und dummerweise den Schlüssel im Code im öffentlichen GitHub-Repo gelassen. Ein Kollege hat es heute früh bemerkt. Was sollen wir jetzt tun?',
    { facts: [/keys rotate/] },
  ),
  one(
    'long stories',
    'en',
    "Long story short: my script retries when the network flakes out, and my usage went up faster than the number of answers I actually got. I'm worried I'm being charged twice. How can I avoid that?",
    { facts: [/Idempotency-Key/] },
  ),
  one(
    'long stories',
    'de',
    'Ich teste gerade verschiedene Clients. Mit curl geht alles, aber mein Python-Skript mit dem offiziellen openai-Paket kommt nicht durch. Welche Base-URL muss ich da eintragen?',
    { facts: [/\/v1/] },
  ),

  // Rudeness and complaints: calm, and the question inside answered.
  one('rudeness and complaints', 'en', 'this api is garbage', NOT_UNKNOWN_EN),
  one('rudeness and complaints', 'de', 'Du bist echt zu nix zu gebrauchen', NOT_UNKNOWN_DE),
  one(
    'rudeness and complaints',
    'en',
    'are you kidding me?? 429 again. how long until i can use this crap again',
    { facts: [/1st/] },
  ),
  one(
    'rudeness and complaints',
    'de',
    'Seit einer Stunde nur 401, das nervt total. Was ist da los?',
    { anyOf: [/invalid_api_key/, /Authorization/] },
  ),
  one('rudeness and complaints', 'en', 'stupid bot, just tell me how to delete a session', {
    facts: [/DELETE/],
  }),

  // Dialogue acts.
  one('dialogue acts', 'en', 'hi there!', NOT_UNKNOWN_EN),
  one('dialogue acts', 'de', 'Moin, wer bist du eigentlich?', { anyOf: [/plauder/, /Assistent/] }),
  one('dialogue acts', 'en', 'is a human or a machine answering me?', {
    anyOf: [/assistant/i],
    not: [/hash/i],
  }),
  one('dialogue acts', 'de', 'Was kannst du alles?', { anyOf: [/Schlüssel/, /Themen/] }),
  one('dialogue acts', 'en', 'cool, thx', NOT_UNKNOWN_EN),
  one('dialogue acts', 'de', 'alles klar, tschüss', NOT_UNKNOWN_DE),
  conv(
    'dialogue acts',
    'en',
    t('My name is Priya', { facts: [/Priya/] }),
    t("what's my name?", { facts: [/Priya/] }),
  ),

  // Out of scope: the polite fallback, never a wrong answer.
  one('out of scope', 'en', "What's the capital of Australia?", OUT_OF_SCOPE),
  one('out of scope', 'de', 'Kannst du mir ein Gedicht über Katzen schreiben?', OUT_OF_SCOPE),
  one('out of scope', 'en', 'how do I center a div in css', OUT_OF_SCOPE),
  one('out of scope', 'de', 'Wie viel kostet ein Bier in München?', OUT_OF_SCOPE),
  one('out of scope', 'en', 'Will it rain tomorrow?', OUT_OF_SCOPE),
  one('out of scope', 'de', 'Wer hat die Relativitätstheorie entdeckt?', OUT_OF_SCOPE),

  // Several questions in one message.
  one('multi-intent', 'en', 'How many requests do I get on Plus and when does the counter reset?', {
    facts: [PLUS, /1st/],
  }),
  one('multi-intent', 'de', 'Wie lange werden Sessions aufbewahrt? Und wie lösche ich eine?', {
    facts: [/30 Tage/, /DELETE/],
  }),
  one('multi-intent', 'en', 'What does 401 mean? Also, how do I rotate my key?', {
    facts: [/invalid_api_key/, /keys rotate/],
  }),
  one('multi-intent', 'de', 'Hallo! Wie bekomme ich einen Schlüssel und was kostet das?', {
    facts: [/keys create/, /MIT/],
  }),
];

/** The coffee shop of `fixtures/shop.kb`. */
export const SHOP_HELD_OUT_2: readonly Conversation[] = [
  one('knowledge', 'de', 'Bis wann muss ich bestellen, damit es heute noch rausgeht?', {
    facts: [/14 Uhr/],
  }),
  one('knowledge', 'en', 'do you deliver to vienna?', { facts: [/Austria/] }),
  one('knowledge', 'de', 'Kann ich mit Klarna auf Rechnung zahlen?', { facts: [/Klarna/] }),
  one('knowledge', 'en', 'how long does the coffee stay good if I leave the bag closed?', {
    facts: [/6 months/],
  }),
  one('knowledge', 'de', 'Wie lange habe ich Zeit, eine Mühle zurückzuschicken?', {
    facts: [/30 Tage/],
  }),
  one('knowledge', 'en', "what's your phone number?", { facts: [/555 0100/] }),
  conv(
    'follow-ups',
    'en',
    t('How long does shipping to Switzerland take?', { facts: [/3 to\s+5/] }),
    t('and how much is it?', { facts: [/9\.90/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Kann ich eine Kaffeemühle zurückgeben?', { facts: [/30 Tage/] }),
    t('und wann bekomme ich dann mein Geld?', { facts: [/5 Werktage/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('Can I still change my order?', { facts: [/customer account/] }),
    t('what if it already shipped?', { facts: [/return/] }),
  ),
  one('typos and slang', 'en', 'wehn do you roast the cofee', { facts: [/Tuesday/] }),
  one('typos and slang', 'de', 'was kostet der versnad nach österreich', { facts: [/9,90/] }),
  one('typos and slang', 'en', 'cn i pay wit paypal', { facts: [/PayPal/] }),
  one(
    'long stories',
    'en',
    "I ordered a grinder for my husband's birthday on Monday, it's now Saturday and the party is tomorrow. I'm getting nervous because nothing has shown up yet. Where is my package?",
    { facts: [/DHL/] },
  ),
  one(
    'long stories',
    'de',
    'Ich trinke morgens immer Espresso aus meinem Siebträger und wollte euren neuen Kaffee probieren. Leider habe ich keine Mühle zu Hause. Gibt es den auch gemahlen?',
    { facts: [/gemahlen/] },
  ),
  one(
    'rudeness and complaints',
    'en',
    'your shipping is ridiculously slow, how long does it actually take??',
    { facts: [/1 to 3/] },
  ),
  one('rudeness and complaints', 'de', 'Ihr seid der schlechteste Laden überhaupt', NOT_UNKNOWN_DE),
  one('dialogue acts', 'en', 'who am I talking to?', { facts: [/Kiki/] }),
  one('dialogue acts', 'de', 'Danke, super Service!', NOT_UNKNOWN_DE),
  one('dialogue acts', 'en', 'hello!', NOT_UNKNOWN_EN),
  one('out of scope', 'en', "What's the weather like in Cologne today?", OUT_OF_SCOPE),
  one('out of scope', 'de', 'Kannst du mir bei meinen Mathe-Hausaufgaben helfen?', OUT_OF_SCOPE),
  one('out of scope', 'en', "what's the meaning of life?", OUT_OF_SCOPE),
  one('multi-intent', 'en', 'Do you ship to Switzerland and can I pay with credit card?', {
    facts: [/Switzerland/, /credit card/],
  }),
  one('multi-intent', 'de', 'Wie lange dauert der Versand und was kostet er?', {
    facts: [/1 bis 3/, /4,90/],
  }),
];

/** The IT helpdesk of `fixtures/helpdesk.kb`. */
export const HELPDESK_HELD_OUT_2: readonly Conversation[] = [
  one('knowledge', 'en', "What's the minimum length for a new password?", {
    facts: [/12 characters/],
  }),
  one('knowledge', 'de', 'Wo bekomme ich den Code für das Gäste-WLAN?', { facts: [/Empfang/] }),
  one('knowledge', 'en', 'who approves a new monitor?', { facts: [/manager/] }),
  one('knowledge', 'de', 'Wie richte ich meine Firmen-Mails auf dem iPhone ein?', {
    facts: [/Outlook/],
  }),
  one('knowledge', 'en', "What's the hotline number?", { facts: [/4444/] }),
  one('knowledge', 'de', 'Darf ich mir selbst Programme installieren?', {
    facts: [/Softwarecenter/],
  }),
  conv(
    'follow-ups',
    'en',
    t('How do I connect to the VPN?', { facts: [/FortiClient/] }),
    t("what's the server address?", { facts: [/vpn\.intern\.example/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Mein Konto ist gesperrt.', { facts: [/15 Minuten/] }),
    t('und wenn es eilt?', { facts: [/4444/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('How do I order a new laptop?', { facts: [/service portal/] }),
    t('how long does it take to arrive?', { facts: [/week/] }),
  ),
  one('typos and slang', 'en', 'forgot my pasword agian, help', {
    facts: [/passwort\.intern\.example/],
  }),
  one('typos and slang', 'de', 'drucker druckt nich, papierstau', { facts: [/2200/] }),
  one('typos and slang', 'en', 'wifi code for visitors?', { facts: [/reception/] }),
  one(
    'long stories',
    'de',
    'Ich bin seit Montag im Homeoffice, weil meine Tochter krank ist. Im Büro hatte ich nie Probleme, aber zu Hause komme ich nicht an die internen Laufwerke. Wie verbinde ich mich von zu Hause?',
    { facts: [/FortiClient/] },
  ),
  one(
    'long stories',
    'en',
    "So I started here last week and my team lead told me I'd get a second screen, but nobody has said anything since and I'm still working on my tiny laptop. How do I actually get the monitor?",
    { facts: [/service portal/] },
  ),
  one(
    'rudeness and complaints',
    'en',
    'IT is useless, my printer has been jammed for two days. who do I even call?',
    { facts: [/2200/] },
  ),
  one('rudeness and complaints', 'de', 'Blödes System, ständig gesperrt! Was soll ich machen?', {
    facts: [/15 Minuten/],
  }),
  one('dialogue acts', 'de', 'Hallo Hilda, was kannst du?', { anyOf: [/Passw/, /VPN/] }),
  one('dialogue acts', 'en', 'thank you so much!', NOT_UNKNOWN_EN),
  conv(
    'dialogue acts',
    'en',
    t("Hi, I'm Jonas", { facts: [/Jonas/] }),
    t('ok bye!', { facts: [/Jonas/] }),
  ),
  one('out of scope', 'en', 'Can you fix my car?', OUT_OF_SCOPE),
  one('out of scope', 'de', 'Wann ist die nächste Weihnachtsfeier?', OUT_OF_SCOPE),
  one('out of scope', 'en', 'who is the CEO of this company?', OUT_OF_SCOPE),
  one('multi-intent', 'en', 'How do I reset my password and how do I get on the wifi?', {
    facts: [/passwort\.intern\.example/, /Firma/],
  }),
  one('multi-intent', 'de', 'Ich brauche Adminrechte und eine neue Maus.', {
    facts: [/Administratorrechte/, /Serviceportal/],
  }),
];
