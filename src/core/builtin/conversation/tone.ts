/**
 * @module core/builtin/conversation/tone
 * Recognises rudeness and frustration in a tokenized message ("your stupid API", "das
 * ist doch Mist", "I'm so fed up"). The assistant then answers calmly: it acknowledges the
 * trouble in one short sentence and goes on with the problem the message names. The
 * tone words themselves are taken out before the rest is matched.
 */

export interface Tone {
  /** Whether the message is rude or frustrated. */
  readonly upset: boolean;
  /** The tokens without the tone words. */
  readonly rest: readonly string[];
}

// Folded forms (umlauts removed), single tokens and short phrases.
const WORDS = new Set(
  `stupid dumb idiot idiotic useless crap crappy damn damned wtf shit shitty sucks suck
  ridiculous annoying pathetic terrible awful garbage trash rubbish hate moron omg seriously
  dammit goddamn fucking fuck frustrated frustrating annoyed
  blod blode bloden bloder dumm dumme dummer dummen doof doofe mist scheiss scheisse
  verdammt verdammte nervig nervt genervt nutzlos nutzlose bekloppt bescheuert teufel kacke
  mann boah frustriert frustrierend argerlich`
    .split(/\s+/)
    .filter((word) => word.length > 0),
);
/**
 * Beginnings of insulting or scornful words, so that inflected and superlative forms are
 * found too ("dümmste", "unfähigen", "worst", "nutzloses").
 */
const STEMS = [
  'dumm',
  'blod',
  'stupid',
  'idiot',
  'nutzlos',
  'useless',
  'unfahig',
  'unbrauchbar',
  'inkompetent',
  'incompetent',
  'worst',
  'schlechtest',
  'schrott',
  'bescheuert',
  'bekloppt',
  'scheiss',
  'beschissen',
  'kacke',
  'fuck',
  'shit',
  'crap',
  'pathetic',
  'terrible',
  'horrible',
  'awful',
  'schrecklich',
  'furchtbar',
  'miserabel',
  'katastroph',
  'lacherlich',
  'ridiculous',
  'versager',
  'loser',
  'moron',
  'garbage',
];
const MIN_STEM_MATCH = 4;

function scornful(token: string): boolean {
  if (WORDS.has(token)) return true;
  if (token.length < MIN_STEM_MATCH) return false;
  for (const stem of STEMS) if (token.startsWith(stem)) return true;
  return false;
}

const INSULTED = new Set([
  'bot',
  'ding',
  'teil',
  'thing',
  'machine',
  'maschine',
  'tool',
  'service',
  'shop',
  'laden',
  'verein',
  'support',
  'program',
  'programm',
]);
const PHRASES: ReadonlyArray<readonly string[]> = [
  ['fed', 'up'],
  ['shut', 'up'],
  ['halt', 'die', 'klappe'],
  ['halts', 'maul'],
  ['zu', 'nichts', 'zu', 'gebrauchen'],
  ['zum', 'teufel'],
  ['are', 'you', 'dumb'],
  ['bist', 'du', 'dumm'],
  ['what', 'the', 'hell'],
];

/** The phrases by their first word, so that a token that starts none costs one lookup. */
const PHRASES_BY_FIRST = new Map<string, Array<readonly string[]>>();
for (const phrase of PHRASES) {
  const first = phrase[0];
  if (first === undefined) continue;
  const list = PHRASES_BY_FIRST.get(first);
  if (list) list.push(phrase);
  else PHRASES_BY_FIRST.set(first, [phrase]);
}

/** Spoken forms of the phrases' words: "zu nix zu gebrauchen". */
const SPOKEN = new Map([
  ['nix', 'nichts'],
  ['nuscht', 'nichts'],
  ['nen', 'einen'],
  ['ya', 'you'],
  ['u', 'you'],
  ['r', 'are'],
]);
const written = (token: string | undefined) =>
  token === undefined ? '' : (SPOKEN.get(token) ?? token);

/** The phrase that starts at `tokens[i]`, if any (no callbacks: this runs for every token). */
function phraseAt(tokens: readonly string[], i: number): readonly string[] | undefined {
  const candidates = PHRASES_BY_FIRST.get(written(tokens[i]));
  if (candidates === undefined) return undefined;
  for (const words of candidates) {
    let k = 1;
    while (k < words.length && written(tokens[i + k]) === words[k]) k++;
    if (k === words.length) return words;
  }
  return undefined;
}

export function detectTone(tokens: readonly string[]): Tone {
  const rest: string[] = [];
  let upset = false;
  for (let i = 0; i < tokens.length; i++) {
    const phrase = phraseAt(tokens, i);
    if (phrase !== undefined) {
      upset = true;
      i += phrase.length - 1;
      continue;
    }
    const token = tokens[i];
    if (token === undefined) break;
    if (!scornful(token)) {
      rest.push(token);
      continue;
    }
    upset = true;
    // "dummer Bot", "stupid thing": the insulted thing is no part of the question.
    if (INSULTED.has(tokens[i + 1] ?? '')) i += 1;
  }
  return { upset, rest };
}
