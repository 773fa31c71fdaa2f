/**
 * @module core/builtin/conversation/small-talk
 * Recognises small talk in a tokenized message: greetings, how-are-you, thanks, goodbyes,
 * "who are you", "what can you do", requests for help, and "what is my name".
 *
 * Phrases are token sequences found anywhere in the message; a phrase word of five or more
 * letters also matches with one typo ("thnaks", "tschüs"). The tokens outside the phrases
 * are returned as `rest`, so "Hallo, wie viele Anfragen habe ich?" is a greeting plus a
 * question for the knowledge base.
 */
import { BoundedCache } from '../text/bounded-cache.js';
import { boundedEditDistance } from '../text/edit-distance.js';

export type SmallTalkKind =
  | 'greeting'
  | 'wellbeing'
  | 'thanks'
  | 'goodbye'
  | 'identity'
  | 'capabilities'
  | 'help'
  | 'acknowledgement'
  | 'filler'
  | 'askName';

interface SmallTalk {
  /** The kinds found, in the order of the message. */
  readonly kinds: readonly SmallTalkKind[];
  /** The tokens outside the recognised phrases. */
  readonly rest: readonly string[];
}

const NAME = '{name}';

const PHRASES: Readonly<Record<SmallTalkKind, string>> = {
  greeting: `hallo | hallochen | hi | hey | heya | hiya | hello | moin | moin moin | servus | huhu
    | gruss dich | gruss gott | gruezi | grussgott | guten tag | guten morgen | guten abend
    | good morning | good afternoon | good evening | good day | greetings | howdy | ahoi`,
  wellbeing: `wie geht es dir | wie geht is dir | wie geht is | wie gehts | wie geht es ihnen
    | wie geht es | alles klar bei dir | how are you | how are you doing | how is it going
    | how do you do | what is up | whats up`,
  thanks: `danke | danke schon | dankeschon | danke sehr | vielen dank | besten dank
    | herzlichen dank | tausend dank | vielen lieben dank | merci | thanks | thank you | thank u
    | thx | ty | cheers | many thanks | much appreciated | appreciate it`,
  goodbye: `tschuss | tschau | ciao | auf wiedersehen | auf wiederhoren | bis bald | bis dann
    | bis spater | bis zum nachsten mal | mach is gut | machs gut | ade | adieu | bye | bye bye
    | goodbye | good bye | see you | see you later | see ya | farewell | take care | gute nacht
    | good night | schonen tag noch | schonen abend | schonen abend noch | schones wochenende
    | have a nice day | have a good day | cya`,
  identity: `wer bist du | was bist du | wie heisst du | wer sind sie | was sind sie
    | wie heissen sie | wie ist dein name | dein name | stell dich vor | stelle dich vor
    | bist du ein bot | bist du ein mensch | bist du eine ki | bist du ein roboter
    | who are you | what are you | what is your name | your name | introduce yourself
    | are you a bot | are you human | are you a human | are you a person | are you an ai
    | are you a robot | who am i talking to | who am i speaking to | who am i chatting with
    | mit wem spreche ich | mit wem rede ich | mit wem schreibe ich | wer ist ${NAME} | was ist ${NAME} | who is ${NAME} | what is ${NAME}`,
  capabilities: `was kannst du | was weisst du | wobei kannst du | wobei hilfst du
    | was kann ich dich fragen | was kann ich fragen | welche themen | woruber weisst du
    | was machst du | what can you do | what do you know | what can i ask | what topics
    | which topics | what can you help | how can you help | what do you do | what are you for
    | womit kannst du | wofur bist du | was bietest du | what do you offer
    | was kann ${NAME} | was kann ${NAME} alles | was macht ${NAME} | wofur ist ${NAME}
    | wozu ist ${NAME} | wozu dient ${NAME} | was kann ich mit ${NAME} | was bietet ${NAME}
    | what can ${NAME} do | what does ${NAME} do | what is ${NAME} for | what is ${NAME} good for
    | what can i do with ${NAME} | what does ${NAME} offer | what can ${NAME}`,
  help: `hilfe | help | hilf mir | help me | ich brauche hilfe | i need help
    | kannst du mir helfen | can you help me | wie funktioniert das | how does this work`,
  askName: `wie heisse ich | wie heiss ich | wie ich heisse | wie ist mein name | wer bin ich
    | kennst du meinen namen | weisst du meinen namen | erinnerst du dich an meinen namen
    | wie heisse ich nochmal | weisst du noch wie ich heisse | wissen sie noch wie ich heisse
    | erinnerst du dich an mich | erinnern sie sich an mich | weisst du wer ich bin
    | wissen sie wer ich bin | kennst du mich noch | kennst du mich
    | what is my name | whats my name | who am i | do you know my name | do you remember my name
    | remember my name | what did i say my name was | do you remember me | remember me
    | do you remember who i am | do you know who i am | you remember me`,
  filler: `sorry | entschuldigung | entschuldige | verzeihung | moment | moment mal | nein | no | nope
    | ja | yes | yeah | genau | by the way | ubrigens | btw | na ja | naja | well | hmm | hm | also gut
    | noch was | noch eine frage | one more thing | another question | eine frage | a question
    | quick question | kurze frage | so much | sehr | very much | all the time | die ganze zeit
    | immer wieder | again and again`,
  acknowledgement: `ok | okay | alles klar | verstanden | verstehe | ich verstehe | super | prima | perfekt
    | cool | klasse | toll | passt | gut | sehr gut | klingt gut | das hilft | hilft mir | got it
    | i see | understood | great | perfect | nice | awesome | sounds good | that helps
    | makes sense | fair enough | alright | all right | fine`,
};

interface Phrase {
  readonly kind: SmallTalkKind;
  readonly words: readonly string[];
}

export interface SmallTalkDetector {
  detect(tokens: readonly string[]): SmallTalk;
}

const CACHE_LIMIT = 4096;

/** Phrases by their first word, longest first ("danke schon" before "danke"). */
function compile(nameTokens: readonly string[]): Map<string, Phrase[]> {
  const byFirst = new Map<string, Phrase[]>();
  for (const [kind, list] of Object.entries(PHRASES) as [SmallTalkKind, string][]) {
    for (const text of list.split('|')) {
      if (text.includes(NAME) && nameTokens.length === 0) continue;
      const words = text
        .trim()
        .split(/\s+/)
        .flatMap((w) => (w === NAME ? nameTokens : [w]));
      const first = words[0];
      if (first === undefined) continue;
      byFirst.set(first, [...(byFirst.get(first) ?? []), { kind, words }]);
    }
  }
  for (const list of byFirst.values()) list.sort((a, b) => b.words.length - a.words.length);
  return byFirst;
}

/**
 * Maps a token to the phrase word it is (or is one typo away from, for words of five or
 * more letters), or to itself. The cheap first-letters test rules out most candidates
 * before the edit distance is computed.
 */
function createCanonicalizer(vocabulary: ReadonlySet<string>): (token: string) => string {
  const words = [...vocabulary].filter((word) => word.length >= 5);
  const cache = new BoundedCache<string, string>(CACHE_LIMIT);
  const nearest = (token: string): string => {
    if (vocabulary.has(token) || token.length < 4) return token;
    for (const word of words) {
      if (Math.abs(word.length - token.length) > 1) continue;
      const a0 = token[0];
      const a1 = token[1];
      if (a0 !== word[0] && a1 !== word[1] && a0 !== word[1] && a1 !== word[0]) continue;
      if (boundedEditDistance(token, word, 1) <= 1) return word;
    }
    return token;
  };
  return (token) => {
    let canonical = cache.get(token);
    if (canonical === undefined) {
      canonical = nearest(token);
      cache.set(token, canonical);
    }
    return canonical;
  };
}

/** Openers of a question about the assistant itself: "are you …", "am I talking to …". */
const SELF_OPENERS: ReadonlyArray<readonly string[]> = [
  ['are', 'you'],
  ['r', 'u'],
  ['bist', 'du'],
  ['sind', 'sie'],
  ['am', 'i', 'talking', 'to'],
  ['am', 'i', 'chatting', 'with'],
  ['am', 'i', 'speaking', 'to'],
  ['am', 'i', 'writing', 'to'],
  ['is', 'this'],
  ['ist', 'das'],
  ['spreche', 'ich', 'mit'],
  ['rede', 'ich', 'mit'],
  ['schreibe', 'ich', 'mit'],
  ['chatte', 'ich', 'mit'],
];
/** What the assistant may be asked to be: a human, a bot, ... */
const NATURE = new Set(
  `human humans mensch menschen person bot chatbot robot roboter ki ai machine maschine
  mitarbeiter mitarbeiterin employee llm gpt chatgpt`.split(/\s+/),
);
/** Only right after "are you" / "bist du": "Are you real?", "Bist du ein Programm?". */
const NATURE_OF_YOU = new Set(
  `real echt echter echte echtes wirklich menschlich program programm computer software
  artificial kunstliche kunstlich automated automatisch automatisiert agent`.split(/\s+/),
);
/** How far after the opener the nature word may come ("are you actually a real person"). */
const NATURE_WINDOW = 5;

/** Who may be answering: "is a human or a machine answering me?", "antwortet mir ein Mensch?". */
const WHO_ANSWERS = new Set(
  'human mensch person machine maschine bot chatbot robot roboter mitarbeiter employee'.split(' '),
);
const ANSWERING = new Set(
  'answering replying responding writing talking antwortet schreibt spricht'.split(' '),
);
const ME = new Set(['me', 'mir', 'mich']);
/** How far apart the words of such a question may be. */
const WHO_WINDOW = 6;

/** The span of "is a human or a machine answering me?": who answers, and "me". */
function whoAnswers(words: readonly string[]): [number, number] | undefined {
  const verb = words.findIndex((word) => ANSWERING.has(word));
  if (verb < 0 || !words.some((word, i) => ME.has(word) && Math.abs(i - verb) <= 2)) {
    return undefined;
  }
  let start = verb;
  let end = verb + 1;
  for (let k = Math.max(0, verb - WHO_WINDOW); k < Math.min(words.length, verb + WHO_WINDOW); k++) {
    if (!WHO_ANSWERS.has(words[k] ?? '') && !ME.has(words[k] ?? '')) continue;
    start = Math.min(start, k);
    end = Math.max(end, k + 1);
  }
  const named = words.slice(start, end).some((word) => WHO_ANSWERS.has(word));
  if (!named) return undefined;
  // "is a ...": the verb that opens the question belongs to it.
  if (start > 0 && ['is', 'ist'].includes(words[start - 1] ?? '')) start -= 1;
  return [start, end];
}

/**
 * A question about what the assistant is ("Are you a real person?", "Bist du ein echter
 * Mensch oder ein Programm?", "Is a human answering me?"): the span of tokens it takes, or
 * undefined.
 */
function selfQuestion(words: readonly string[]): [number, number] | undefined {
  return openedSelfQuestion(words) ?? whoAnswers(words);
}

function openedSelfQuestion(words: readonly string[]): [number, number] | undefined {
  for (let at = 0; at < words.length; at++) {
    for (const opener of SELF_OPENERS) {
      if (!opener.every((word, i) => words[at + i] === word)) continue;
      const start = at + opener.length;
      const direct =
        opener[0] === 'are' || opener[0] === 'r' || opener[0] === 'bist' || opener[0] === 'sind';
      let end = -1;
      for (let k = start; k < Math.min(words.length, start + NATURE_WINDOW); k++) {
        const word = words[k] ?? '';
        if (NATURE.has(word) || (direct && NATURE_OF_YOU.has(word))) end = k + 1;
      }
      if (end > 0) {
        // "... oder ein Programm?": the alternative belongs to the same question.
        for (let k = end; k < Math.min(words.length, end + 4); k++) {
          const word = words[k] ?? '';
          if (NATURE.has(word) || NATURE_OF_YOU.has(word)) end = k + 1;
        }
        return [at, end];
      }
    }
  }
  return undefined;
}

interface Span {
  readonly kind: SmallTalkKind;
  readonly start: number;
  readonly end: number;
}

/**
 * Kinds that frame a message rather than ask something: they count only at its start or
 * end ("super, danke", "ok, and how long?"), not inside a sentence that says something
 * else ("Who won the last Super Bowl?", "Translate good night into French").
 */
const FRAMING: ReadonlySet<SmallTalkKind> = new Set([
  'greeting',
  'thanks',
  'goodbye',
  'acknowledgement',
  'filler',
]);

/** The spans that ask something, and the framing ones in a run of small talk at either edge. */
function atTheEdges(spans: readonly Span[], length: number): Span[] {
  let head = 0;
  for (const span of spans) {
    if (span.start !== head) break;
    head = span.end;
  }
  let tail = length;
  for (let i = spans.length - 1; i >= 0; i--) {
    const span = spans[i];
    if (span === undefined || span.end !== tail) break;
    tail = span.start;
  }
  return spans.filter((span) => !FRAMING.has(span.kind) || span.end <= head || span.start >= tail);
}

/** `nameTokens`: the assistant's name, tokenized (for "what is plauder?"). */
export function createSmallTalkDetector(nameTokens: readonly string[]): SmallTalkDetector {
  const byFirst = compile(nameTokens);
  const vocabulary = new Set([...byFirst.values()].flat().flatMap((phrase) => phrase.words));
  const canonical = createCanonicalizer(vocabulary);
  const matchAt = (words: readonly string[], at: number): Phrase | undefined =>
    byFirst
      .get(words[at] ?? '')
      ?.find(
        (phrase) =>
          at + phrase.words.length <= words.length &&
          phrase.words.every((word, i) => words[at + i] === word),
      );
  return {
    detect(tokens) {
      const words = tokens.map(canonical);
      const self = selfQuestion(words);
      const spans: Span[] = [];
      let at = 0;
      while (at < words.length) {
        if (self !== undefined && at === self[0]) {
          spans.push({ kind: 'identity', start: at, end: self[1] });
          at = self[1];
          continue;
        }
        const phrase = matchAt(words, at);
        if (phrase === undefined) at += 1;
        else {
          spans.push({ kind: phrase.kind, start: at, end: at + phrase.words.length });
          at += phrase.words.length;
        }
      }
      const kept = atTheEdges(spans, words.length);
      const kinds: SmallTalkKind[] = [];
      const rest: string[] = [];
      let next = 0;
      for (const span of kept) {
        rest.push(...tokens.slice(next, span.start));
        if (!kinds.includes(span.kind)) kinds.push(span.kind);
        next = span.end;
      }
      rest.push(...tokens.slice(next));
      return { kinds, rest };
    },
  };
}
