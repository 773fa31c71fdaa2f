/**
 * @module core/builtin/conversation/segments
 * Splits a message into its sentences, so each part (a greeting, a name, a story, one or
 * more questions) can be read on its own: "Hi, I'm Priya. How many requests do we get on
 * Plus?" is a greeting with a name, then a question. A full stop ends a sentence only
 * before a space or the end and not after a number ("am 1. Mai") or a common
 * abbreviation ("Dr.", "z. B.", "e.g.").
 */

export interface Segment {
  readonly text: string;
  /** Ends with a question mark, or starts like a question. */
  readonly question: boolean;
}

const ABBREVIATIONS = new Set(
  'dr prof mr mrs ms st nr bzw ca evtl ggf usw inkl zb z b bspw vgl eg e g ie i etc vs dipl ing hr fr'.split(
    ' ',
  ),
);
const QUESTION_START =
  /^(wie|was|wann|wo|warum|wieso|weshalb|welche[rsnm]?|wer|kann|kannst|k[öo]nnen|darf|gibt|ist|sind|hat|habe|muss|soll|how|what|when|where|why|which|who|can|could|do|does|did|is|are|will|would|should|may)\b/i;
/** Messages are bounded (4000 characters by default); more sentences are not read. */
const MAX_SEGMENTS = 12;

function endsAbbreviation(text: string, dot: number): boolean {
  let start = dot;
  while (start > 0 && /[\p{L}\p{N}]/u.test(text[start - 1] ?? '')) start -= 1;
  const word = text.slice(start, dot).toLowerCase();
  if (word === '') return false;
  if (/^\d+$/.test(word)) return true;
  return ABBREVIATIONS.has(word) || word.length === 1;
}

export function splitSegments(message: string): Segment[] {
  const segments: Segment[] = [];
  let start = 0;
  const push = (end: number) => {
    const text = message.slice(start, end).trim();
    start = end;
    if (text === '' || !/[\p{L}\p{N}]/u.test(text)) return;
    segments.push({ text, question: /\?\s*$/.test(text) || QUESTION_START.test(text) });
  };
  for (let i = 0; i < message.length && segments.length < MAX_SEGMENTS; i++) {
    const c = message[i];
    const next = message[i + 1];
    if (c === '\n') push(i + 1);
    else if (c === '?' || c === '!') {
      while (message[i + 1] === '?' || message[i + 1] === '!') i += 1;
      push(i + 1);
    } else if (
      c === '.' &&
      (next === undefined || /\s/.test(next)) &&
      !endsAbbreviation(message, i)
    ) {
      push(i + 1);
    } else if (c === ';' || (c === ':' && next !== undefined && /\s/.test(next))) push(i + 1);
  }
  if (segments.length < MAX_SEGMENTS) push(message.length);
  return segments;
}
