/**
 * @module test/core/builtin/suite/held-out-3
 * The third held-out part: fresh conversations in users' words, written from the README,
 * `docs/` and the contents of the three knowledge bases before the core was tuned again,
 * and never tuned on. The first two held-out parts (`held-out.ts`, `held-out-2.ts`) are
 * the development set for it: only this part tells whether a change generalizes. When a
 * turn here fails, fix the core or a knowledge base in general terms (and add a similar
 * turn to the development part), never by adding this turn's words.
 *
 * Each turn names the facts its reply must carry, never a wording (see `checks.ts`).
 */
import type { Expectation } from './checks.js';
import { conversationBuilders, type PlayableConversation } from './run-suite.js';

export const HELD_OUT_3_CATEGORIES = [
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
type HeldOut3Category = (typeof HELD_OUT_3_CATEGORIES)[number];

type Conversation = PlayableConversation<HeldOut3Category>;
const { t, one, conv } = conversationBuilders<HeldOut3Category>();

/** Greetings, thanks, goodbyes and insults are never answered with "I don't know". */
const NOT_UNKNOWN_EN: Expectation = { kind: 'answer', not: [/don't know/i] };
const NOT_UNKNOWN_DE: Expectation = { kind: 'answer', not: [/weiß ich/i] };
const OUT_OF_SCOPE: Expectation = { kind: 'fallback' };

const STANDARD = /\b1[.,]?000\b/;
const PLUS = /\b5[.,]?000\b/;

export const PLAUDER_HELD_OUT_3: readonly Conversation[] = [
  // Knowledge: the shipped sample's topics, asked the way people ask.
  one('knowledge', 'en', "I'm on standard. how many chat messages is that per month?", {
    facts: [STANDARD],
  }),
  one('knowledge', 'de', 'Wie viel ist im Plus-Paket drin?', { facts: [PLUS] }),
  one('knowledge', 'en', 'does checking /api/usage use up one of my requests?', {
    facts: [/not count|neither/i],
  }),
  one('knowledge', 'de', 'Wie lang ist so ein API-Key eigentlich?', { facts: [/\b46\b/] }),
  one('knowledge', 'en', 'Can a teammate read my conversations if they use their own key?', {
    anyOf: [/separate/, /no key can read/],
  }),
  one('knowledge', 'de', 'Welche Zeichen darf ich in einer sessionId verwenden?', {
    facts: [/\b128\b/],
  }),
  one(
    'knowledge',
    'en',
    'if my boss bumps me up to plus mid-month, does my count start at zero again?',
    { facts: [/still count/i] },
  ),
  one('knowledge', 'de', 'Mein Zugang ist pausiert worden, was heißt das für mich?', {
    facts: [/plan_inactive/],
  }),
  one('knowledge', 'de', 'Muss ich Deutsch schreiben, wenn ich /api/chat benutze?', {
    anyOf: [/anderen Sprache/, /\/api\/chat-en/],
  }),
  one(
    'knowledge',
    'en',
    'is there a way to see in the response headers how many calls I have left?',
    { anyOf: [/X-RateLimit-Remaining/, /RateLimit/] },
  ),
  one('knowledge', 'de', 'Wer kann einen Schlüssel sperren, und wirkt das sofort?', {
    facts: [/keys revoke/],
  }),
  // An English question on the German endpoint is answered in German.
  one('knowledge', 'de', 'How long are sessions stored?', { facts: [/30 Tage/] }),

  // Features the README and docs/ describe.
  one('service features', 'en', 'is there a prometheus endpoint for metrics?', {
    facts: [/\/metrics/],
  }),
  one('service features', 'de', 'Welche Werkzeuge bietet der MCP-Server an?', {
    facts: [/forget_session/],
  }),
  one(
    'service features',
    'en',
    'which model name do I pass to get english replies through the openai api?',
    { facts: [/plauder-en/] },
  ),
  one(
    'service features',
    'de',
    'Wie lange bekomme ich bei gleichem Idempotency-Key dieselbe Antwort zurück?',
    { facts: [/24 Stunden/] },
  ),
  one(
    'service features',
    'en',
    'what if my app closes the socket before the reply is done, am I billed for it?',
    { anyOf: [/refunded/, /does not count/] },
  ),
  one(
    'service features',
    'de',
    'Bekommt mein System eine Meldung, wenn ein neuer Schlüssel angelegt wird?',
    { facts: [/key\.created/] },
  ),
  one('service features', 'en', 'can I run plauder on sqlite or do I need a postgres server?', {
    facts: [/SQLite/],
  }),
  one('service features', 'de', 'Kann ich für einen Plan auch ein Minutenlimit festlegen?', {
    facts: [/60\/minute/],
  }),
  one('service features', 'en', 'Can I swap the built-in knowledge for my own FAQ?', {
    facts: [/PLAUDER_KNOWLEDGE/],
  }),
  one('service features', 'de', 'Kann ich mir die Schnittstelle im Browser als Swagger ansehen?', {
    facts: [/\/docs/],
  }),
  one('service features', 'en', 'Do webhook deliveries get retried if my endpoint is down?', {
    facts: [/25 hours/],
  }),
  one(
    'service features',
    'de',
    'Wie richte ich für einen Großkunden ein eigenes Monatslimit von 20000 ein?',
    { facts: [/PLAUDER_PLANS/] },
  ),

  // Follow-ups: the topic and its attribute carry over.
  conv(
    'follow-ups',
    'de',
    t('Wie viele Anfragen gibt es im Standard-Tarif?', { facts: [STANDARD] }),
    t('und wie sehe ich, wie viele davon noch übrig sind?', { facts: [/\/api\/usage/] }),
    t('zählt diese Abfrage auch mit?', { anyOf: [/zählt nicht/, /ebenso wenig/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('what does a 500 mean?', { facts: [/technical error/] }),
    t('and 413?', { facts: [/64 KiB/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Was ist ein Soft-Fehler?', { facts: [/Status 200/] }),
    t('zählt so einer gegen mein Kontingent?', { anyOf: [/zählen nicht/, /zählt nicht/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('Can I talk to plauder over MCP?', { facts: [/\/mcp/] }),
    t('which editors work with that?', { anyOf: [/Claude Code/, /Cursor/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Ich will plauder vor meinen Rasa-Bot setzen.', { facts: [/PLAUDER_RASA_URL/] }),
    t('und wenn ich für jede Sprache einen eigenen Bot habe?', {
      facts: [/PLAUDER_RASA_URL_DE/],
    }),
  ),
  conv(
    'follow-ups',
    'en',
    t("What's the limit on plus?", { facts: [PLUS] }),
    t('what about standard?', { facts: [STANDARD] }),
    t('how much does it cost?', { facts: [/MIT/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Was passiert beim Rotieren mit meinen Sessions?', { facts: [/erhalten/] }),
    t('und wie lange gilt der alte Schlüssel danach noch?', { facts: [/--grace/] }),
  ),

  // Typos and slang.
  one('typos and slang', 'de', 'wie krieg ich nen api schlüsel', { facts: [/keys create/] }),
  one('typos and slang', 'en', 'wats the diff between standrd and plus', {
    facts: [STANDARD, PLUS],
  }),
  one('typos and slang', 'de', 'zählen fehlgeschlagne anfragen mit??', {
    facts: [/zählen nicht/],
  }),
  one('typos and slang', 'en', 'how 2 delete my sesion history', { facts: [/DELETE/] }),
  one('typos and slang', 'de', 'gibts ne openai kompatible schnitstelle', { facts: [/\/v1/] }),
  one('typos and slang', 'en', 'does the key ever expier', { facts: [/not expire/i] }),
  one('typos and slang', 'de', 'wo seh ich grad meinen verbrauch', { facts: [/\/api\/usage/] }),
  one('typos and slang', 'en', 'pls explain 429 real quick', {
    anyOf: [/quota_exceeded/, /limit/],
  }),

  // Long stories with the question somewhere inside.
  one(
    'long stories',
    'de',
    'Wir haben einen kleinen Support-Chat für unseren Onlineshop gebaut, und am Black Friday kamen plötzlich sehr viele Kunden gleichzeitig. Ein paar Anfragen wurden abgelehnt, obwohl das Monatslimit noch lange nicht erreicht war. Wie viele Anfragen dürfen eigentlich gleichzeitig laufen?',
    { facts: [/\b16\b/] },
  ),
  one(
    'long stories',
    'en',
    "We're moving from a single VPS to a Kubernetes cluster with three replicas next month. Our ops person asked whether the quotas still add up correctly when requests land on different pods, and what the pods need to share. Can you tell me?",
    { facts: [/PostgreSQL/] },
  ),
  one(
    'long stories',
    'de',
    'Ich betreibe plauder für einen Telegram-Bot in unserer Laufgruppe. Einer aus der Gruppe arbeitet im Datenschutz und hat gleich gefragt, ob wir mitlesen können. Steht in euren Logs eigentlich, was die Leute schreiben?',
    { facts: [/Nachrichtentext/] },
  ),
  one(
    'long stories',
    'en',
    'Our intern rotated the production key on Friday evening and the app returned errors the whole weekend until someone noticed. Nobody was hurt, but next time, is there a way to keep the old key alive for a while we roll out the new one?',
    { facts: [/--grace/] },
  ),
  one(
    'long stories',
    'de',
    'So, der Server läuft jetzt endlich bei mir auf dem Raspberry Pi, und einen Schlüssel hat mir der Admin auch schon gegeben. Ich bin aber kein Entwickler und weiß nicht weiter. Wie schicke ich jetzt meine erste Nachricht?',
    { facts: [/POST/, /\/api\/chat/] },
  ),
  one(
    'long stories',
    'en',
    "We're a small team in Berlin and our customers keep asking why their monthly counter resets at 1 or 2 in the morning instead of at midnight. Can I make the month start at midnight our time?",
    { facts: [/PLAUDER_QUOTA_TIMEZONE/] },
  ),
  one(
    'long stories',
    'en',
    "One of our customers already used up their whole month by the 20th because their new feature got popular. They can't wait until next month, the feature is part of their product. What can we do?",
    { anyOf: [/larger plan/, /set-plan/] },
  ),

  // Rudeness and complaints: calm, and the question inside answered.
  one('rudeness and complaints', 'en', 'what a piece of junk', NOT_UNKNOWN_EN),
  one(
    'rudeness and complaints',
    'de',
    'Halt die Klappe und sag mir einfach, wie ich meinen Schlüssel rotiere!',
    { facts: [/keys rotate/] },
  ),
  one(
    'rudeness and complaints',
    'en',
    'seriously, why does my key keep getting rejected?!? fix your crap',
    { anyOf: [/invalid_api_key/, /Authorization/] },
  ),
  one(
    'rudeness and complaints',
    'de',
    'Was für ein Sauladen, nix funktioniert hier',
    NOT_UNKNOWN_DE,
  ),
  one('rudeness and complaints', 'en', "you charged me for requests that failed, that's a scam", {
    anyOf: [/do not count/, /does not count/],
  }),
  one(
    'rudeness and complaints',
    'de',
    'Boah, wie oft denn noch: WIE LANGE bleiben meine Gespräche gespeichert???',
    { facts: [/30 Tage/] },
  ),

  // Dialogue acts.
  one('dialogue acts', 'de', 'Guten Morgen!', NOT_UNKNOWN_DE),
  one('dialogue acts', 'en', 'are you chatgpt?', {
    anyOf: [/built-in assistant/, /without an AI model/],
  }),
  one('dialogue acts', 'en', 'good night, talk later', NOT_UNKNOWN_EN),
  conv(
    'dialogue acts',
    'de',
    t('Ich bin die Lena.', { facts: [/Lena/] }),
    t('Wie heiße ich?', { facts: [/Lena/] }),
  ),
  one('dialogue acts', 'en', 'so what are you good for?', { anyOf: [/keys?\b/i, /plans?\b/i] }),
  one('dialogue acts', 'de', 'Bist du eine KI?', { anyOf: [/plauder/, /Assistent/] }),

  // Out of scope: the polite fallback, never a wrong answer.
  one('out of scope', 'en', 'How many moons does Jupiter have?', OUT_OF_SCOPE),
  one('out of scope', 'de', 'Was ist die beste Programmiersprache?', OUT_OF_SCOPE),
  one('out of scope', 'en', 'write me a python function that sorts a list', OUT_OF_SCOPE),
  one('out of scope', 'de', 'Welcher Tag ist heute?', OUT_OF_SCOPE),
  one('out of scope', 'en', 'Can you recommend a good movie for tonight?', OUT_OF_SCOPE),
  one('out of scope', 'de', 'Wie viele Tage hat ein Schaltjahr?', OUT_OF_SCOPE),

  // Several questions in one message.
  one(
    'multi-intent',
    'en',
    'How long is an idle session kept, and how many turns does it remember?',
    { facts: [/30 days/, /\b20\b/] },
  ),
  one('multi-intent', 'de', 'Gibt es Webhooks, und wie prüfe ich ihre Signatur?', {
    facts: [/PLAUDER_WEBHOOK_URL/, /HMAC/],
  }),
  one(
    'multi-intent',
    'en',
    "Hi, I'm Omar. Does plauder work with the openai SDK, and is there MCP?",
    {
      facts: [/Omar/, /\/v1/, /\/mcp/],
    },
  ),
  one(
    'multi-intent',
    'de',
    'Wie lange ist mein Schlüssel gültig, und was mache ich, wenn er geleakt wurde?',
    { facts: [/nicht von selbst ab/, /sofort rotieren|neues Geheimnis/] },
  ),
  one(
    'multi-intent',
    'en',
    'What happens when I run out of requests, and can I see how many I have left?',
    { facts: [/429/, /\/api\/usage/] },
  ),
  one(
    'multi-intent',
    'de',
    'Wie lang darf eine Nachricht sein und wie viele Anfragen dürfen gleichzeitig laufen?',
    { facts: [/\b4[.,]?000\b/, /\b16\b/] },
  ),
];

/** The coffee shop of `fixtures/shop.kb`. */
export const SHOP_HELD_OUT_3: readonly Conversation[] = [
  one('knowledge', 'de', 'Welche Kreditkarten nehmt ihr?', { facts: [/Visa/, /Mastercard/] }),
  one('knowledge', 'en', 'can I pay in advance by bank transfer?', { facts: [/prepayment/] }),
  one('knowledge', 'de', 'Steht irgendwo drauf, wann der Kaffee geröstet wurde?', {
    facts: [/Röstdatum/],
  }),
  one('knowledge', 'en', 'Do you ship to Italy?', { facts: [/Germany, Austria and Switzerland/] }),
  one('knowledge', 'de', 'Muss ich mich registrieren, um bei euch zu bestellen?', {
    facts: [/ersten Einkauf/],
  }),
  one('knowledge', 'en', 'what are your phone hours?', { facts: [/9 am/] }),
  one('knowledge', 'de', 'Kann ich angebrochenen Kaffee zurückgeben?', {
    facts: [/ausgeschlossen/],
  }),
  conv(
    'follow-ups',
    'en',
    t('How much is shipping within Germany?', { facts: [/4\.90/] }),
    t('and when is it free?', { facts: [/40 euros/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Wie schicke ich eine Mühle zurück?', { facts: [/Kundenkonto/] }),
    t('und wie lange hab ich dafür Zeit?', { facts: [/30 Tage/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('When do you roast?', { facts: [/Tuesday/] }),
    t('and how soon after that do you send it out?', { facts: [/7 days/] }),
  ),
  one('typos and slang', 'en', 'wher is my pacakge', { facts: [/DHL/] }),
  one('typos and slang', 'de', 'kan man bei euch mit kreditkate zahlen', {
    facts: [/Kreditkarte/],
  }),
  one('typos and slang', 'en', 'whole beans or groud?', { facts: [/whole beans/] }),
  one('typos and slang', 'de', 'bestelung stornieren wie', { facts: [/Kundenkonto/] }),
  one(
    'long stories',
    'en',
    "I'm ordering coffee for our whole office, about twelve bags a month, and our accounting department really doesn't like it when I pay with my private card and claim it back. Can we pay by invoice instead?",
    { facts: [/Klarna/] },
  ),
  one(
    'long stories',
    'de',
    'Ich habe vor acht Tagen bestellt, die Sendungsverfolgung zeigt seit Tagen denselben Stand und langsam werde ich unruhig, weil der Kaffee ein Geschenk ist. An wen kann ich mich wenden?',
    { facts: [/hallo@kaffeekiste\.example/] },
  ),
  one(
    'rudeness and complaints',
    'en',
    "you people are clowns, my refund still hasn't arrived. how long does it take?",
    { facts: [/5 working days/] },
  ),
  one(
    'rudeness and complaints',
    'de',
    'Was ist das für ein Laden, ich hab mein Passwort vergessen und nix geht mehr',
    { facts: [/Passwort zurücksetzen/] },
  ),
  one('rudeness and complaints', 'en', 'this shop sucks', NOT_UNKNOWN_EN),
  one('dialogue acts', 'de', 'Wobei kannst du mir helfen?', {
    anyOf: [/Versand/, /Bestellung/, /Lieferzeit/],
  }),
  conv(
    'dialogue acts',
    'en',
    t("I'm Sam", { facts: [/Sam/] }),
    t('thanks Kiki, bye', { facts: [/Sam/] }),
  ),
  one('out of scope', 'en', 'What time does the football match start tonight?', OUT_OF_SCOPE),
  one('out of scope', 'de', 'Kannst du mir ein Rezept für Tiramisu geben?', OUT_OF_SCOPE),
  one('out of scope', 'en', 'Is coffee bad for my heart?', OUT_OF_SCOPE),
  one('multi-intent', 'de', 'Wann röstet ihr, und gibt es den Kaffee auch gemahlen?', {
    facts: [/Dienstag/, /gemahlen/],
  }),
  one('multi-intent', 'en', 'How fast do you deliver to Austria, and do you take PayPal?', {
    facts: [/3 to\s+5/, /PayPal/],
  }),
];

/** The IT helpdesk of `fixtures/helpdesk.kb`. */
export const HELPDESK_HELD_OUT_3: readonly Conversation[] = [
  one('knowledge', 'en', 'what are the hotline hours?', { facts: [/7 am/] }),
  one('knowledge', 'de', 'Wie heißt der VPN-Server?', { facts: [/vpn\.intern\.example/] }),
  one('knowledge', 'en', 'how many wrong tries before I get locked out?', { facts: [/\b5\b/] }),
  one('knowledge', 'de', 'Braucht mein Handy eine Displaysperre für die Firmenmails?', {
    facts: [/Bildschirmsperre/],
  }),
  one('knowledge', 'en', "What's the staff wifi called?", { facts: [/"Firma"/] }),
  one('knowledge', 'en', "The program I need isn't in the Software Center, what now?", {
    facts: [/ticket/],
  }),
  conv(
    'follow-ups',
    'de',
    t('Ich muss im neuen Raum drucken, wie geht das?', { facts: [/print\.intern\.example/] }),
    t('und wenn der Toner leer ist?', { facts: [/2200/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('How do I get my mail on my Android phone?', { facts: [/Outlook/] }),
    t('does the phone need anything special?', { facts: [/screen lock/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Wie kommt ein Gast bei uns ins WLAN?', { facts: [/Firma-Gast/] }),
    t('und wo gibt es den Code?', { facts: [/Empfang/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('How do I open a ticket?', { facts: [/service portal/] }),
    t("what's the email address for that?", { facts: [/helpdesk@intern\.example/] }),
  ),
  one('typos and slang', 'de', 'vpn geht nich von zuhaus', { facts: [/FortiClient/] }),
  one('typos and slang', 'en', 'acc locked after too many atempts', { facts: [/15 minutes/] }),
  one('typos and slang', 'de', 'brauch ne neue tastatur', { facts: [/Serviceportal/] }),
  one('typos and slang', 'en', 'how do i instal programs', { facts: [/Software Center/] }),
  one(
    'long stories',
    'en',
    "Tomorrow we have two people from a partner company here for a workshop. They'll bring their own laptops and need internet for their slides and demos. How can they get online?",
    { facts: [/Firma-Gast/] },
  ),
  one(
    'long stories',
    'de',
    'Ich habe letzte Woche ein neues iPhone bekommen und alles Private schon eingerichtet, Fotos, WhatsApp und so weiter. Nur die Firmenmails fehlen noch. Wie bekomme ich die drauf?',
    { facts: [/Outlook/] },
  ),
  one(
    'rudeness and complaints',
    'de',
    'Ernsthaft, schon wieder gesperrt. Wie lange muss ich jetzt warten?',
    { facts: [/15 Minuten/] },
  ),
  one('rudeness and complaints', 'en', 'worst helpdesk ever', NOT_UNKNOWN_EN),
  one('rudeness and complaints', 'en', "why won't you people just give me admin rights??", {
    facts: [/administrator rights/],
  }),
  one('dialogue acts', 'de', 'Servus Hilda', NOT_UNKNOWN_DE),
  one('dialogue acts', 'de', 'Mit wem spreche ich?', { facts: [/Hilda/] }),
  one('out of scope', 'de', 'Wie beantrage ich Urlaub?', OUT_OF_SCOPE),
  one('out of scope', 'en', "What's on the lunch menu today?", OUT_OF_SCOPE),
  one('out of scope', 'en', 'How do I file my travel expenses?', OUT_OF_SCOPE),
  one('multi-intent', 'en', 'My account is locked and I also need a new headset.', {
    facts: [/15 minutes/, /service portal/],
  }),
  one(
    'multi-intent',
    'de',
    'Wie komme ich von zuhause ins Netz, und wie richte ich die Mails auf dem Handy ein?',
    { facts: [/FortiClient/, /Outlook/] },
  ),
];
