/**
 * @module core/builtin/conversation/user-memory
 * What the user said about themselves: their name, from "Ich heiße Anna", "Mein Name ist
 * Anna", "Nenn mich Anna", "My name is Anna", "Call me Anna", and, when the word after it
 * is capitalised and not an ordinary word, "Ich bin Anna" / "I'm Anna".
 * The memory is rebuilt from the session's history on every request: the core keeps no
 * state between requests, so without a session it knows nothing.
 */
import type { Turn } from '../../core-adapter.js';
import { foldText } from '../text/tokenize.js';

export interface NameStatement {
  readonly name: string;
  /** Where the statement is in the message, so the rest can be read as a question. */
  readonly start: number;
  readonly end: number;
}

const WORD = String.raw`(\p{L}[\p{L}'’-]{0,39})`;
const NAME = String.raw`${WORD}(?:[ \t]+${WORD})?`;
const BEFORE = String.raw`(?:^|[^\p{L}])`;
const FILLER = String.raw`(?:(?:einfach|doch|bitte|ruhig|gerne|gern|just|simply)\s+)?`;
const STRONG = new RegExp(
  String.raw`${BEFORE}(?:ich\s+hei(?:ß|ss)e|mein\s+name\s+ist|man\s+nennt\s+mich|nenn(?:e|t)?\s+mich|nennen\s+sie\s+mich|my\s+name\s+is|my\s+name['’]s|(?:you\s+can\s+)?call\s+me|i\s+am\s+called|i['’]m\s+called)\s+${FILLER}${NAME}`,
  'dgiu',
);
const WEAK = new RegExp(
  String.raw`${BEFORE}(?:ich\s+bin(?:\s+(?:die|der))?|i\s+am|i['’]m|hier\s+ist|this\s+is)\s+${FILLER}${NAME}`,
  'dgiu',
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
  able unable excited`.split(/\s+/),
);

/** Names are stated near the start of a message; longer earlier turns are not searched to the end. */
const HISTORY_SCAN_CHARS = 500;

export interface NameReader {
  /** The name stated in this message, if any. */
  read(message: string): NameStatement | undefined;
  /** The latest name stated in the history, if any. */
  fromHistory(history: readonly Turn[]): string | undefined;
}

function displayName(words: readonly string[]): string {
  return words
    .map((word) =>
      word === word.toLowerCase() ? word.charAt(0).toUpperCase() + word.slice(1) : word,
    )
    .join(' ');
}

function isCapitalised(word: string): boolean {
  const first = word.charAt(0);
  return first !== first.toLowerCase();
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
    if (isStopWord(folded)) return false;
    if (strong) return true;
    return !isVocabulary(folded) && !NOT_NAMES.has(folded) && isCapitalised(word);
  };

  const fromMatch = (match: RegExpExecArray, strong: boolean): NameStatement | undefined => {
    const [first, second] = [match[1], match[2]];
    if (!usable(first, strong)) return undefined;
    // A second word only when it looks like a surname: "Anna Schmidt", not "Anna und".
    const words = usable(second, false) ? [first, second] : [first];
    const end = match.indices?.[words.length]?.[1] ?? match.index + match[0].length;
    return { name: displayName(words), start: match.index, end };
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

  const read = (message: string) => attempt(STRONG, message, true) ?? attempt(WEAK, message, false);

  return {
    read,
    fromHistory(history) {
      for (let i = history.length - 1; i >= 0; i--) {
        const statement = read((history[i]?.message ?? '').slice(0, HISTORY_SCAN_CHARS));
        if (statement !== undefined) return statement.name;
      }
      return undefined;
    },
  };
}
