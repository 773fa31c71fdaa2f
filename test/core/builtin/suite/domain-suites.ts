/**
 * @module test/core/builtin/suite/domain-suites
 * Conversations with two knowledge bases of other domains, written for the tests
 * (`../fixtures/shop.kb`, a coffee shop, and `../fixtures/helpdesk.kb`, an IT helpdesk):
 * the built-in core must work for an operator's own knowledge as it does for the sample.
 */
import type { Language } from '../../../../src/core/core-adapter.js';
import type { Expectation } from './checks.js';
import type { PlayableConversation } from './run-suite.js';

export type DomainCategory =
  | 'knowledge'
  | 'paraphrase and typos'
  | 'follow-ups'
  | 'multi-intent'
  | 'small talk and names'
  | 'out of scope';

type Conversation = PlayableConversation<DomainCategory>;
const t = (say: string, expect: Expectation, language?: Language) =>
  language === undefined ? { say, expect } : { say, expect, language };
const one = (
  category: DomainCategory,
  language: Language,
  say: string,
  expect: Expectation,
): Conversation => ({
  category,
  language,
  turns: [t(say, expect)],
});
const conv = (
  category: DomainCategory,
  language: Language,
  ...turns: ReturnType<typeof t>[]
): Conversation => ({
  category,
  language,
  turns,
});

export const SHOP_SUITE: readonly Conversation[] = [
  one('knowledge', 'de', 'Wie lange dauert die Lieferung?', { facts: [/1 bis 3 Werktage/] }),
  one('knowledge', 'de', 'Was kostet der Versand?', { facts: [/4,90/] }),
  one('knowledge', 'de', 'Kann ich etwas zurückschicken?', { facts: [/30 Tage/] }),
  one('knowledge', 'de', 'Welche Zahlungsarten gibt es?', { facts: [/PayPal/] }),
  one('knowledge', 'en', 'How long does shipping take?', { facts: [/1 to 3 working days/] }),
  one('knowledge', 'en', 'Do you ship to France?', { facts: [/Germany, Austria and Switzerland/] }),
  one('knowledge', 'en', 'Can I cancel my order?', { facts: [/customer account/] }),
  one('knowledge', 'en', 'How fresh is your coffee?', { facts: [/roast/] }),
  one('paraphrase and typos', 'de', 'ab wann ist der versand kostenlos', { facts: [/40 Euro/] }),
  one('paraphrase and typos', 'de', 'Mein Paket ist noch nicht angekommen, wo ist es?', {
    facts: [/Sendungsnummer/],
  }),
  one('paraphrase and typos', 'en', 'can i pay by credit crad', { facts: [/credit card/] }),
  one('paraphrase and typos', 'en', 'i forgot my pasword', { facts: [/Reset password/] }),
  one('paraphrase and typos', 'en', 'Do you sell ground coffee for my french press?', {
    facts: [/French press/],
  }),
  one('paraphrase and typos', 'de', 'Wie erreiche ich einen Menschen bei euch?', {
    facts: [/0221/],
  }),
  conv(
    'follow-ups',
    'de',
    t('Wie lange dauert die Lieferung nach Deutschland?', { facts: [/1 bis 3/] }),
    t('Und in die Schweiz?', { facts: [/3 bis 5/] }),
    t('Was kostet das?', { facts: [/9,90/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('How do returns work?', { facts: [/30 days/] }),
    t('and when do I get my money back?', { facts: [/5 working days/] }),
  ),
  conv(
    'multi-intent',
    'de',
    t('Hallo, ich bin Petra. Wie lange dauert der Versand und was kostet er?', {
      facts: [/Petra/, /1 bis 3/, /4,90/],
    }),
  ),
  conv(
    'multi-intent',
    'en',
    t('Thanks! Which payment methods do you accept, and can I return opened coffee?', {
      facts: [/PayPal/, /Opened coffee cannot/],
    }),
  ),
  conv(
    'small talk and names',
    'de',
    t('Hallo!', { anyOf: [/Hallo/] }),
    t('Wer bist du?', { facts: [/Kiki/] }),
    t('Ich heiße Jan.', { facts: [/Jan/] }),
    t('Danke dir, tschüss', { anyOf: [/Tschüss/, /Gern/] }),
  ),
  conv(
    'small talk and names',
    'en',
    t('hi, what can you do?', { anyOf: [/delivery time/, /shipping/] }),
    t('my name is Ruth', { facts: [/Ruth/] }),
    t("what's my name?", { facts: [/Ruth/] }),
  ),
  one('out of scope', 'de', 'Wie wird das Wetter morgen?', { kind: 'fallback' }),
  one('out of scope', 'en', 'Can you fix my car?', { kind: 'fallback' }),
  one('out of scope', 'en', 'Who is the president of France?', { kind: 'fallback' }),
  one('out of scope', 'de', 'Erzähl mir etwas über Quantenphysik.', { kind: 'fallback' }),
];

export const HELPDESK_SUITE: readonly Conversation[] = [
  one('knowledge', 'de', 'Ich habe mein Passwort vergessen.', {
    facts: [/passwort\.intern\.example/],
  }),
  one('knowledge', 'de', 'Wie komme ich von zuhause ins Firmennetz?', { facts: [/FortiClient/] }),
  one('knowledge', 'de', 'Wie richte ich einen Drucker ein?', {
    facts: [/print\.intern\.example/],
  }),
  one('knowledge', 'de', 'Wie bekomme ich einen neuen Monitor?', { facts: [/Serviceportal/] }),
  one('knowledge', 'en', 'How do I connect to the VPN?', { facts: [/FortiClient/] }),
  one('knowledge', 'en', 'My account is locked, what now?', { facts: [/15 minutes/] }),
  one('knowledge', 'en', 'What is the guest wifi?', { facts: [/Firma-Gast/] }),
  one('knowledge', 'en', 'How do I get my work email on my iPhone?', { facts: [/Outlook/] }),
  one('paraphrase and typos', 'de', 'drucker druckt nicht, papierstau', { facts: [/2200/] }),
  one('paraphrase and typos', 'de', 'Kann ich mir selbst Programme installieren?', {
    facts: [/Softwarecenter/],
  }),
  one('paraphrase and typos', 'en', 'how do i reset my pasword', {
    facts: [/passwort\.intern\.example/],
  }),
  one('paraphrase and typos', 'en', 'need admin rights to install software pls', {
    facts: [/Software Center/],
  }),
  one('paraphrase and typos', 'en', 'who do I call when everything is broken', { facts: [/4444/] }),
  one('paraphrase and typos', 'de', 'Wie lautet das WLAN für Besucher?', { facts: [/Firma-Gast/] }),
  conv(
    'follow-ups',
    'de',
    t('Ich habe mich zu oft falsch angemeldet.', { facts: [/15 Minuten/] }),
    t('Und wen rufe ich an, wenn es eilt?', { facts: [/4444/] }),
  ),
  conv(
    'follow-ups',
    'en',
    t('How do I order a new laptop?', { facts: [/service portal/] }),
    t('how long does it take?', { facts: [/week/] }),
  ),
  conv(
    'multi-intent',
    'de',
    t('Hi, ich bin Murat. Wie komme ich ins VPN und wie ins Gäste-WLAN?', {
      facts: [/Murat/, /FortiClient/, /Firma-Gast/],
    }),
  ),
  conv(
    'multi-intent',
    'en',
    t('Two things: my printer has a paper jam, and how do I open a ticket?', {
      facts: [/2200/, /helpdesk@intern\.example/],
    }),
  ),
  conv(
    'small talk and names',
    'de',
    t('Moin', { anyOf: [/Hallo/, /Moin/] }),
    t('Was kannst du?', { anyOf: [/Passwort/] }),
    t('Nenn mich Bea', { facts: [/Bea/] }),
    t('Danke!', { anyOf: [/Gern/] }),
  ),
  conv(
    'small talk and names',
    'en',
    t('hello, who are you?', { facts: [/Hilda/] }),
    t("I'm Dev", { facts: [/Dev/] }),
    t('thanks, bye', { anyOf: [/bye/i] }),
  ),
  one('out of scope', 'de', 'Was gibt es heute in der Kantine?', { kind: 'fallback' }),
  one('out of scope', 'en', 'What is the capital of Peru?', { kind: 'fallback' }),
  one('out of scope', 'en', 'Can you book me a flight to Rome?', { kind: 'fallback' }),
  one('out of scope', 'de', 'Wann ist die nächste Betriebsversammlung?', { kind: 'fallback' }),
];
