/**
 * @module test/core/builtin/suite/dev-suite
 * The development part of the new conversation categories (the same categories as the
 * held-out part in `held-out.ts`): conversations the core and the knowledge bases may be
 * tuned on. Together with `plauder-suite.ts` and `domain-suites.ts` it is what a change is
 * tried against; the held-out part then tells whether the change generalizes.
 */
import type { Language } from '../../../../src/core/core-adapter.js';
import type { Expectation } from './checks.js';
import type { HeldOutCategory } from './held-out.js';
import type { PlayableConversation } from './run-suite.js';

type Conversation = PlayableConversation<HeldOutCategory>;
type Turn = { say: string; expect: Expectation; language?: Language };

const t = (say: string, expect: Expectation, language?: Language): Turn =>
  language === undefined ? { say, expect } : { say, expect, language };
const one = (
  category: HeldOutCategory,
  language: Language,
  say: string,
  expect: Expectation,
): Conversation => ({ category, language, turns: [t(say, expect)] });
const conv = (category: HeldOutCategory, language: Language, ...turns: Turn[]): Conversation => ({
  category,
  language,
  turns,
});

const SOCIAL_EN: Expectation = { kind: 'answer', not: [/don't know/i] };
const SOCIAL_DE: Expectation = { kind: 'answer', not: [/weiß ich/i] };

export const PLAUDER_DEV: readonly Conversation[] = [
  one('knowledge', 'en', 'What happens when I use up all my requests?', { facts: [/429/] }),
  one('knowledge', 'de', 'Wie viele Anfragen habe ich im Plus-Tarif?', {
    facts: [/\b5[.,]?000\b/],
  }),

  // Features documented in docs/ that got their own entries with the ranker.
  one('service features', 'en', 'Does Claude Code work with plauder?', {
    facts: [/\/v1\/messages/],
  }),
  one('service features', 'de', 'Kann ich Claude Code mit plauder verwenden?', {
    facts: [/\/v1\/messages/],
  }),
  one('service features', 'en', 'Where do the token numbers in usage come from?', {
    facts: [/four characters/],
  }),
  one('service features', 'de', 'Woher kommen die Token-Zahlen?', { facts: [/vier Zeichen/] }),
  one('service features', 'en', 'Can the sessionId be null?', { facts: [/absent sessionId/] }),
  one('service features', 'de', 'Darf sessionId null sein?', { facts: [/fehlende sessionId/] }),
  one('service features', 'en', 'What is PLAUDER_SECRET used for?', { facts: [/AES-256-GCM/] }),
  one('service features', 'de', 'Wofür ist PLAUDER_SECRET da?', { facts: [/AES-256-GCM/] }),
  one('service features', 'en', 'How big can a session get?', {
    facts: [/PLAUDER_SESSION_MAX_BYTES/],
  }),
  one('service features', 'de', 'Wie groß kann eine Session werden?', {
    facts: [/PLAUDER_SESSION_MAX_BYTES/],
  }),
  one('service features', 'en', 'Does plauder support the Responses API?', {
    facts: [/\/v1\/responses/],
  }),
  one('service features', 'de', 'Geht auch die Responses API von OpenAI?', {
    facts: [/\/v1\/responses/],
  }),
  one('service features', 'en', 'What does X-Session-Truncated mean?', {
    facts: [/PLAUDER_SESSION_MAX_BYTES/],
  }),
  one('service features', 'en', 'Can I try out a request in the console?', {
    facts: [/playground/],
  }),
  one('service features', 'de', 'Kann ich in der Konsole etwas ausprobieren?', {
    facts: [/Playground/],
  }),
  one('service features', 'en', 'Can I send pictures through /v1?', { facts: [/image_url/] }),
  one('service features', 'en', 'What environment variables can I set?', {
    facts: [/environment variables/],
  }),
  one('service features', 'en', 'How do I get streaming responses?', {
    anyOf: [/text\/event-stream/, /Server-Sent Events/],
  }),
  one('service features', 'de', 'Kann ich die Antwort als Stream bekommen?', {
    anyOf: [/text\/event-stream/, /Server-Sent Events/],
  }),
  one('service features', 'en', 'Is plauder compatible with the OpenAI API?', { facts: [/\/v1/] }),
  one('service features', 'de', 'Welche Modelle gibt es unter /v1?', { facts: [/plauder-de/] }),
  one('service features', 'en', 'What is the MCP endpoint for?', { facts: [/\/mcp/] }),
  one('service features', 'de', 'Wie binde ich plauder in Claude Code oder Cursor ein?', {
    facts: [/\/mcp/],
  }),
  one('service features', 'en', 'What is the Idempotency-Key header for?', {
    facts: [/Idempotency-Key/],
  }),
  one('service features', 'de', 'Wie mache ich Wiederholungen sicher, ohne doppelt zu zahlen?', {
    facts: [/Idempotency-Key/],
  }),
  one('service features', 'en', 'Can a plan have a limit per minute?', {
    anyOf: [/\/minute/, /per minute/, /per-minute/],
  }),
  one('service features', 'en', 'Does plauder send webhooks?', {
    facts: [/PLAUDER_WEBHOOK_URL/],
  }),
  one('service features', 'de', 'Wie prüfe ich die Signatur der Webhooks?', {
    anyOf: [/webhook-signature/, /Standard Webhooks/],
  }),
  one('service features', 'en', 'How do I connect my Rasa bot?', { facts: [/PLAUDER_RASA_URL/] }),
  one('service features', 'de', 'Kann ich statt des eingebauten Kerns ein LLM nutzen?', {
    facts: [/PLAUDER_OPENAI_BASE_URL/],
  }),
  one('service features', 'en', 'Is there a web console for admins?', { facts: [/\/admin\//] }),
  one('service features', 'en', 'Is there a limit on parallel requests per key?', {
    facts: [/\b16\b/],
  }),
  one('service features', 'de', 'Was passiert, wenn der Client die Verbindung abbricht?', {
    anyOf: [/nicht gezählt/, /zählt nicht/, /erstattet/, /client_closed/],
  }),
  one('service features', 'en', 'Can I run several instances of plauder?', {
    facts: [/postgres/i],
  }),
  one('service features', 'en', 'Where is the API documentation?', {
    anyOf: [/\/docs/, /openapi\.json/],
  }),
  one('service features', 'de', 'Wo ist die Doku der API?', { anyOf: [/\/docs/] }),
  one('service features', 'en', 'Which reply cores are there?', { facts: [/PLAUDER_CORE/] }),
  one('service features', 'en', 'Does a request count if my client disconnects?', {
    anyOf: [/does not count/, /refunded/],
  }),
  one(
    'service features',
    'de',
    'Wie viele Anfragen darf ein Schlüssel gleichzeitig laufen lassen?',
    {
      facts: [/\b16\b/],
    },
  ),
  one('service features', 'en', 'How do I verify the signature of a webhook?', {
    facts: [/webhook-signature/],
  }),
  one('service features', 'de', 'Wie verbinde ich plauder mit meinem Rasa-Bot?', {
    facts: [/PLAUDER_RASA_URL/],
  }),
  one('service features', 'de', 'Kann plauder auf mehreren Servern laufen?', {
    facts: [/PostgreSQL/],
  }),
  one('service features', 'de', 'Wo stelle ich plauder ein?', { facts: [/Umgebungsvariablen/] }),
  one('service features', 'en', 'What settings does plauder have?', {
    facts: [/environment variables/],
  }),
  one('service features', 'de', 'Darf ich die API aus dem Frontend im Browser aufrufen?', {
    facts: [/CORS/],
  }),
  one('service features', 'en', 'Can my website call plauder directly from the browser?', {
    facts: [/CORS/],
  }),

  conv(
    'follow-ups',
    'en',
    t('What is a session?', { facts: [/sessionId/] }),
    t('and how long is it kept?', { facts: [/30 days/] }),
  ),
  conv(
    'follow-ups',
    'de',
    t('Wie viele Anfragen gibt es im Standard-Plan?', { facts: [/\b1[.,]?000\b/] }),
    t('und beim anderen?', { facts: [/\b5[.,]?000\b/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('How do I use plauder from the OpenAI SDK?', { facts: [/\/v1/] }),
    t('and can it stream?', { anyOf: [/stream/i] }),
  ),

  one('typos and slang', 'en', 'how do i revokee a kee', { facts: [/keys revoke/] }),
  one('typos and slang', 'en', 'wen does the cuonter reset', { facts: [/UTC/] }),
  one('typos and slang', 'de', 'wie krieg ich nen api schlüsel', { facts: [/keys create/] }),
  one('typos and slang', 'de', 'wie lange bleibt ne sesion gespeichert', { facts: [/30 Tage/] }),
  one('typos and slang', 'de', 'kann ich den schlüsel rotiern', { facts: [/keys rotate/] }),
  one('typos and slang', 'en', 'how many reqeusts on standrad', { facts: [/\b1[.,]?000\b/] }),
  one('typos and slang', 'en', 'whre do i see my usgae', { facts: [/\/api\/usage/] }),
  one('typos and slang', 'en', 'can i delet a sesion', { facts: [/DELETE \/api\/sessions/] }),

  one(
    'long stories',
    'en',
    "We migrated our support bot last month and everything went fine until yesterday. Our ops person says the sessions disappear after some time, and a customer came back after six weeks and the bot didn't remember anything. How long are sessions stored?",
    { facts: [/30 days/] },
  ),
  one(
    'long stories',
    'de',
    'Ich baue gerade eine kleine App für unseren Verein und habe den Schlüssel aus Versehen in ein öffentliches Repository gepusht. Mein Kollege sagt, das ist schlimm. Was soll ich jetzt tun?',
    { anyOf: [/keys rotate/, /keys revoke/] },
  ),

  one('rudeness and complaints', 'en', 'what a useless piece of software', SOCIAL_EN),
  one('rudeness and complaints', 'de', 'Du bist so nutzlos.', SOCIAL_DE),
  one(
    'rudeness and complaints',
    'en',
    'seriously, your stupid api keeps saying quota exceeded, when does it reset??',
    { facts: [/UTC/] },
  ),

  one('dialogue acts', 'en', 'ok thanks', SOCIAL_EN),
  one('dialogue acts', 'de', 'danke, gut zu wissen', SOCIAL_DE),
  one('dialogue acts', 'en', 'am I talking to a human?', { anyOf: [/assistant/i] }),
  one('dialogue acts', 'de', 'Bist du eine KI?', { anyOf: [/Assistent/] }),
  one('dialogue acts', 'en', 'What does plauder do?', { anyOf: [/keys?/i] }),
  one('dialogue acts', 'de', 'Wofür ist plauder gut?', { anyOf: [/Schlüssel/] }),

  one('out of scope', 'en', 'What is the weather like in Paris?', { kind: 'fallback' }),
  one('out of scope', 'de', 'Wer hat die Fußball-WM 2014 gewonnen?', { kind: 'fallback' }),
  one('out of scope', 'en', 'Can you recommend a good book?', { kind: 'fallback' }),
  one('out of scope', 'en', 'What is the capital of Australia?', { kind: 'fallback' }),
  one('out of scope', 'en', 'How do I bake bread?', { kind: 'fallback' }),
  one('out of scope', 'en', 'Which programming language is the best?', { kind: 'fallback' }),
  one('out of scope', 'de', 'Kannst du mir einen Witz erzählen?', { kind: 'fallback' }),
  one('out of scope', 'de', 'Wer ist der Bundeskanzler?', { kind: 'fallback' }),
  // Greetings and thanks inside a sentence that asks about something else are no small talk.
  one('out of scope', 'en', 'Is the new Super Mario game any good?', { kind: 'fallback' }),
  one('out of scope', 'en', 'Who painted the Mona Lisa?', { kind: 'fallback' }),
  // The venting around a complaint does not drown its question.
  one(
    'rudeness and complaints',
    'en',
    'this stupid thing keeps spitting out 429 errors at me, what does 429 mean',
    { facts: [/quota_exceeded/] },
  ),
];

/** The coffee shop of `fixtures/shop.kb`. */
export const SHOP_DEV: readonly Conversation[] = [
  conv(
    'follow-ups',
    'en',
    t('How long does shipping to Switzerland take?', { facts: [/3 to\s+5/] }),
    t('and what does it cost?', { facts: [/9\.90/] }),
  ),
  one('typos and slang', 'en', 'can i pay w/ paypal', { facts: [/PayPal/] }),
  one('rudeness and complaints', 'en', 'your shop is terrible', SOCIAL_EN),
  one('dialogue acts', 'en', 'are you a real person?', { anyOf: [/Kiki/] }),
  // A follow-up that names its own topic asks the attribute of that topic.
  conv(
    'follow-ups',
    'en',
    t('How long does delivery to Austria take?', { facts: [/3 to 5/] }),
    t('and how long until a refund arrives?', { facts: [/5 working days/] }),
  ),
];

/** The IT helpdesk of `fixtures/helpdesk.kb`. */
export const HELPDESK_DEV: readonly Conversation[] = [
  conv(
    'follow-ups',
    'en',
    t('How do I connect to the VPN?', { facts: [/FortiClient/] }),
    t('which server do I use?', { facts: [/vpn\.intern\.example/] }),
  ),
  one('rudeness and complaints', 'de', 'Ihr seid echt unfähig', SOCIAL_DE),
  one('dialogue acts', 'de', 'Danke, hat geklappt', SOCIAL_DE),
];
