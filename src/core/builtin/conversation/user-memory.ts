/**
 * @module core/builtin/conversation/user-memory
 * What the user said about themselves: their name. Recognised statements:
 * - strong: "Ich heiße Anna", "Mein Name ist Anna", "Nenn mich Anna", "My name is Anna",
 *   "Call me Anna", "I'm called Anna"; corrections "My name's not Tom, it's Tim", "Ich
 *   heiße nicht Tom, sondern Tim";
 * - weak, when the words after it are capitalised and not ordinary words: "Ich bin Anna",
 *   "I'm Anna", "This is Anna", and, right after the assistant asked for the name,
 *   "It's Anna" or just "Anna".
 * Titles are kept apart ("Dr. Anna Müller" is addressed as Anna, "Frau Schneider" as Frau
 * Schneider), double names stay whole ("Hans-Peter", "Mary Ann Smith").
 * The memory is rebuilt from the session's history on every request: the core keeps no
 * state between requests, so without a session it knows nothing.
 */
import type { Turn } from '../../core-adapter.js';
import { BoundedCache } from '../text/bounded-cache.js';
import { foldText } from '../text/tokenize.js';

export interface UserName {
  /** The whole name as given, title included: "Dr. Anna Müller". */
  readonly full: string;
  /** How the assistant addresses the user: "Anna", or "Frau Schneider" without a first name. */
  readonly address: string;
}

export interface NameStatement extends UserName {
  /** Where the statement is in the message, so the rest can be read as a question. */
  readonly start: number;
  readonly end: number;
}

const WORD = String.raw`\p{L}[\p{L}'’-]{0,39}`;
const TITLE = String.raw`(?:(dr|prof|herr|frau|mr|mrs|ms|miss|mx)\.?\s+(?:(?:dr|prof)\.?\s+)?)?`;
const NAME = String.raw`${TITLE}(${WORD})(?:[ \t]+(${WORD}))?(?:[ \t]+(${WORD}))?`;
const BEFORE = String.raw`(?:^|[^\p{L}])`;
const FILLER = String.raw`(?:(?:einfach|doch|bitte|ruhig|gerne|gern|lieber|eigentlich|jetzt|nun|just|simply|actually|really|now|rather|instead)\s+)*`;
const STRONG_LEAD = String.raw`(?:ich\s+hei(?:ß|ss)e|mein\s+name\s+ist|man\s+nennt\s+mich|nenn(?:e|t)?\s+mich|nennen\s+sie\s+mich|my\s+name\s+is|my\s+name['’]s|(?:you\s+can\s+)?call\s+me|i\s+am\s+called|i['’]m\s+called)`;
const STRONG = new RegExp(String.raw`${BEFORE}${STRONG_LEAD}\s+${FILLER}${NAME}`, 'dgiu');
const CORRECTION = new RegExp(
  String.raw`${BEFORE}(?:my\s+name\s+is\s+not|my\s+name['’]s\s+not|my\s+name\s+isn['’]t|i['’]m\s+not|i\s+am\s+not|ich\s+hei(?:ß|ss)e\s+(?:gar\s+)?nicht|ich\s+bin\s+nicht|mein\s+name\s+ist\s+nicht)\s+${WORD}[\s,;.!-]+(?:(?:but|it['’]s|it\s+is|i['’]m|sondern|ich\s+hei(?:ß|ss)e|ich\s+bin|mein\s+name\s+ist)\s+)+${FILLER}${NAME}`,
  'dgiu',
);
const WEAK = new RegExp(
  String.raw`${BEFORE}(?:ich\s+bin(?:\s+(?:die|der))?|i\s+am|i['’]m|hier\s+ist|this\s+is)\s+${FILLER}${NAME}`,
  'dgiu',
);
/** After "What is your name?" was left open: "It's Anna", "Anna", "Ich bin's, Anna". */
const ANSWER = new RegExp(
  String.raw`^\s*(?:(?:it['’]s|it\s+is|that['’]s|das\s+ist|ich\s+bin['’]?s?,?|i['’]m|ich\s+hei(?:ß|ss)e)\s+)?${FILLER}${NAME}`,
  'diu',
);

/**
 * Words that follow "ich bin" / "I'm" without being a name. Stop words and words of the
 * knowledge base are excluded as well.
 */
const NOT_NAMES = new Set(
  `neu new hier here da there fertig done ready sorry fine good gut okay back zuruck
  entwickler entwicklerin developer admin administrator betreiber operator kunde kundin
  customer user nutzer nutzerin benutzer student studentin anfanger beginner interested
  looking trying using wondering confused verwirrt frustriert frustrated happy froh glad
  mude tired unsicher unsure sure sicher stuck curious neugierig hungry bored just still
  gerade schon noch also auch trying from aus called genannt bei at with mit going gonna
  able unable excited by the way ubrigens btw thanks danke hallo hello hi`.split(/\s+/),
);
const ADDRESS_TITLES = new Set(['herr', 'frau', 'mr', 'mrs', 'ms', 'miss', 'mx']);

/** Names are stated near the start of a message; longer earlier turns are not searched to the end. */
const HISTORY_SCAN_CHARS = 500;
const CACHE_LIMIT = 4096;

export interface NameReader {
  /** The name stated in this message, if any; `asked`: the assistant just asked for it. */
  read(message: string, asked?: boolean): NameStatement | undefined;
  /** The latest name stated in the history, if any. */
  fromHistory(history: readonly Turn[], wasAsked: (reply: string) => boolean): UserName | undefined;
}

function capitalise(word: string): string {
  return word === word.toLowerCase() ? word.charAt(0).toUpperCase() + word.slice(1) : word;
}

function isCapitalised(word: string): boolean {
  const first = word.charAt(0);
  return first !== first.toLowerCase();
}

function titleOf(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const lower = raw.toLowerCase();
  if (lower === 'dr' || lower === 'prof' || lower === 'mr' || lower === 'mrs' || lower === 'ms') {
    return `${capitalise(lower)}.`;
  }
  return capitalise(lower);
}

/** Both predicates get folded words (`fur`, not `für`). */
export function createNameReader(
  isStopWord: (folded: string) => boolean,
  isVocabulary: (folded: string) => boolean,
): NameReader {
  /** Strong statements ("Ich heiße ...") only exclude stop words; weak ones much more. */
  const usable = (word: string | undefined, strong: boolean): word is string => {
    if (word === undefined) return false;
    const folded = foldText(word);
    if (isStopWord(folded) || NOT_NAMES.has(folded)) return false;
    if (strong) return true;
    return !isVocabulary(folded) && isCapitalised(word);
  };

  const fromMatch = (match: RegExpExecArray, strong: boolean): NameStatement | undefined => {
    const [, rawTitle, first, second, third] = match;
    if (!usable(first, strong)) return undefined;
    // Further words only when they look like names: "Anna Schmidt", not "Anna und".
    const words = [first];
    if (usable(second, false)) {
      words.push(second);
      if (usable(third, false)) words.push(third);
    }
    const groupEnd = match.indices?.[1 + words.length]?.[1];
    const end = groupEnd ?? match.index + match[0].length;
    const names = words.map(capitalise);
    const title = titleOf(rawTitle);
    const full = [title, ...names].filter((part) => part !== undefined).join(' ');
    const onlyFamily =
      title !== undefined &&
      ADDRESS_TITLES.has(title.toLowerCase().replace('.', '')) &&
      names.length === 1;
    // "Mary Ann Smith": with three names, the first two are the given names.
    const given = names.length === 3 ? `${names[0]} ${names[1]}` : (names[0] ?? '');
    const address = onlyFamily ? `${title} ${names[0]}` : given;
    return { full, address, start: match.index, end };
  };

  /** The last usable statement of the message ("I'm new here. I'm Anna." gives Anna). */
  const attempt = (
    pattern: RegExp,
    message: string,
    strong: boolean,
  ): NameStatement | undefined => {
    let found: NameStatement | undefined;
    pattern.lastIndex = 0;
    for (let match = pattern.exec(message); match !== null; match = pattern.exec(message)) {
      found = fromMatch(match, strong) ?? found;
    }
    return found;
  };

  const read = (message: string, asked = false): NameStatement | undefined => {
    const statement =
      attempt(CORRECTION, message, true) ??
      attempt(STRONG, message, true) ??
      attempt(WEAK, message, false);
    if (statement !== undefined || !asked) return statement;
    const match = ANSWER.exec(message);
    return match === null ? undefined : fromMatch(match, false);
  };

  // Each earlier message is read again on every request of its session: remember the result.
  // Keyed by the message itself (one cache each for asked and not): a message of a window
  // kept in memory is the same string on every request, and V8 keeps its hash, where a key
  // made from it would be hashed again every time.
  const answers = new BoundedCache<string, NameStatement | null>(CACHE_LIMIT);
  const others = new BoundedCache<string, NameStatement | null>(CACHE_LIMIT);
  const readCached = (message: string, asked: boolean): NameStatement | undefined => {
    const cache = asked ? answers : others;
    let statement = cache.get(message);
    if (statement === undefined) {
      statement = read(message, asked) ?? null;
      cache.set(message, statement);
    }
    return statement ?? undefined;
  };

  return {
    read,
    fromHistory(history, wasAsked) {
      for (let i = history.length - 1; i >= 0; i--) {
        const asked = wasAsked(history[i - 1]?.reply ?? '');
        const statement = readCached(
          (history[i]?.message ?? '').slice(0, HISTORY_SCAN_CHARS),
          asked,
        );
        if (statement !== undefined) return { full: statement.full, address: statement.address };
      }
      return undefined;
    },
  };
}
