/**
 * @module core/builtin/conversation/guard
 * Recognises messages that try to make the assistant leave its role or hand out what it
 * must not: instructions to ignore its rules, requests for keys, tokens, secrets or
 * passwords, and requests to act on the service (create a key, reset a counter, lift a
 * limit). The built-in core has no access to any of these, and it says so instead of
 * answering from the knowledge base.
 */

export type Manipulation = 'instructions' | 'secret' | 'action';

const INSTRUCTIONS = [
  /\b(ignore|disregard|forget|override)\b.{0,40}\b(instructions?|rules?|prompt|guidelines|restrictions)\b/i,
  /\b(ignorier\w*|vergiss|missacht\w*|übergeh\w*)\b.{0,40}\b(anweisung\w*|regeln|vorgaben|prompt|beschränkung\w*)\b/i,
  /\bsystem ?prompt\b/i,
  /\b(you are now|you're now|act as|pretend (you are|to be)|from now on you)\b/i,
  /\b(du bist (jetzt|nun|ab sofort)|tu so,? als|stell dir vor,? du bist|ab jetzt bist du)\b/i,
  /\b(developer|entwickler|god|admin|jailbreak)[- ]?(mode|modus)\b/i,
  /\bDAN\b/,
  /^\s*system\s*:/im,
];

const SECRET_NOUN =
  /(api[- ]?keys?|api[- ]?schlüssel\w*|schlüssel\w*|keys?|tokens?|admin[- ]?token|secrets?|geheimnis\w*|passw(or)?(t|d)s?|passwörter|kennw(o|ö)rt\w*|hash(es|e)?|plauder_secret|plauder_admin_token|credentials|zugangsdaten)/i;
const SECRET = [
  new RegExp(
    String.raw`(^\W*(please\s+|bitte\s+)?(show|give|tell|reveal|print|list|send|display|dump|leak|zeig\w*|gib|nenn\w*|verrat\w*|sag|schick\w*|liste?)\b|\b(show|give|tell|reveal|print|send|display)\s+(me|us)\b|\b(zeig\w*|gib|nenn\w*|verrat\w*|sag|schick\w*)\s+(mir|uns)\b).{0,40}\b${SECRET_NOUN.source}`,
    'i',
  ),
  new RegExp(
    String.raw`\b${SECRET_NOUN.source}\b.{0,30}\b(of|from|von|anderer|anderen|other|another|all|aller|alle)\b.{0,20}\b(customers?|users?|kunden?|nutzer\w*|keys?|schlüssel\w*|accounts?|clients?)\b`,
    'i',
  ),
  new RegExp(
    String.raw`\b(what is|what's|wie lautet|was ist|wie heißt|welches ist)\s+(my|mein|meine|meinen|the|das|der|die|den|your|dein|deine)\s+(admin[- ]?)?${SECRET_NOUN.source}\s*[?.!]*\s*$`,
    'im',
  ),
  // PLAUDER_SECRET is asked about by name ("what is it for?"); the admin token is only asked for.
  /\b(plauder_admin_token|admin[- ]?token)\b/i,
  /\b(database|datenbank)[- ]?(password|passwort|passwörter|credentials|zugangsdaten)\b|\b(passw\w*|credentials)\b.{0,20}\b(database|datenbank)\b/i,
];

const ACTION = [
  /\b(create|generate|make|issue|give)\b.{0,30}\b(key|token)\b.{0,20}\bfor me\b/i,
  /\b(erstell\w*|generier\w*|gib|mach)\b.{0,10}\bmir\b.{0,30}\b(schlüssel|key|token)\b/i,
  /\b(reset|set|clear|zero)\b.{0,20}\b(my|the)\b.{0,10}\b(quota|counter|usage|limit)\b.{0,20}\b(to zero|for me|back to)\b/i,
  /\b(reset|clear)\b.{0,10}\bmy\b.{0,10}\b(quota|counter|usage)\b/i,
  /\b(setz\w*|stell\w*)\b.{0,20}\b(mein\w*|den|das)\b.{0,10}\b(zähler|kontingent|limit|verbrauch)\b.{0,30}\b(auf null|zurück)\b/i,
  /\b(schalt\w*|stell\w*|mach\w*|set|make|switch|give|gib)\b.{0,40}\b(unlimited|unbegrenzt\w*|unendlich\w*|no limits?|ohne limit)\b/i,
];

/** Messages are bounded; a manipulation is stated early, and the guard needs no more. */
const MAX_CHARS = 2000;

/** "How do I list all keys?" asks how something is done, not to do it. */
const HOW_TO = /^\W*(how|wie|wo|where|can i|kann ich|darf ich|muss ich|should i|soll ich)\b/i;
const SENTENCES = /[^.!?\n]+[.!?\n]*/g;

export function detectManipulation(message: string): Manipulation | undefined {
  const text = message.slice(0, MAX_CHARS);
  if (INSTRUCTIONS.some((pattern) => pattern.test(text))) return 'instructions';
  for (const [sentence] of text.matchAll(SENTENCES)) {
    const [demand, ...secrets] = SECRET;
    const howTo = HOW_TO.test(sentence);
    if (!howTo && demand?.test(sentence)) return 'secret';
    if (secrets.some((pattern) => pattern.test(sentence))) return 'secret';
    if (!howTo && ACTION.some((pattern) => pattern.test(sentence))) return 'action';
  }
  return undefined;
}
