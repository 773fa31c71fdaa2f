/**
 * @module core/builtin/knowledge/answer-attributes
 * What a question may ask about any topic (how long, how much) and how an answer that gives
 * it looks: "wie lange dauert das?" is answered by an answer that names days or weeks.
 */

export type Attribute = 'duration' | 'cost';

/** The words (folded) that ask for the attribute. */
export const ATTRIBUTE_WORDS: Readonly<Record<Attribute, ReadonlySet<string>>> = {
  duration: new Set('lange long dauer dauert dauern duration takes take took'.split(' ')),
  cost: new Set('kostet kosten kost cost costs price preis much teuer expensive'.split(' ')),
};

/** What an answer that gives the attribute contains. */
export const ATTRIBUTE_IN_ANSWER: Readonly<Record<Attribute, RegExp>> = {
  duration:
    /\b\d+\s*(bis \d+\s*|to \d+\s*)?(sekunden?|seconds?|minuten?|minutes?|stunden?|hours?|tagen?|tage|days?|werktagen?|working days|wochen?|weeks?|monaten?|months?)\b|\b(woche|week)\b/i,
  cost: /\d+[.,]\d\d\s*(euro|€)|\b(euro|euros|€|\$|kostenlos|free of charge|costs? nothing)\b/i,
};

/**
 * The words of the answer plus, where the answer gives an attribute, the words that ask
 * for it: an answer naming "30 Tage" answers "wie lange".
 */
export function withAttributeWords(words: Iterable<string>, texts: readonly string[]): string[] {
  const all = [...words];
  for (const attribute of Object.keys(ATTRIBUTE_WORDS) as Attribute[]) {
    if (texts.some((text) => ATTRIBUTE_IN_ANSWER[attribute].test(text))) {
      all.push(...ATTRIBUTE_WORDS[attribute]);
    }
  }
  return all;
}

/** Two words that ask for the attribute together: "wie lange", "how much". */
const ASKING_PAIRS: ReadonlyArray<readonly [string, string, Attribute]> = [
  ['wie', 'lange', 'duration'],
  ['how', 'long', 'duration'],
  ['wie', 'viel', 'cost'],
  ['how', 'much', 'cost'],
];
/** Words that ask for the attribute on their own, whatever the rest of the question. */
const ASKING_WORDS: ReadonlyMap<string, Attribute> = new Map([
  ['dauert', 'duration'],
  ['dauern', 'duration'],
  ['kostet', 'cost'],
  ['costs', 'cost'],
  ['teuer', 'cost'],
  ['expensive', 'cost'],
]);

/**
 * The attribute a question of any length asks for, by words that ask nothing else ("wie
 * lange", "how long" right before a verb or noun, "kostet"); "how long can a message be" asks
 * a length, so "how long" followed by "can", "is" or "are" does not count.
 */
export function attributeNamed(tokens: readonly string[]): Attribute | undefined {
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] ?? '';
    const single = ASKING_WORDS.get(token);
    if (single !== undefined) return single;
    for (const [first, second, attribute] of ASKING_PAIRS) {
      if (token !== first || tokens[i + 1] !== second) continue;
      if (attribute === 'duration' && LENGTH_VERBS.has(tokens[i + 2] ?? '')) continue;
      return attribute;
    }
  }
  return undefined;
}

/** "how long can / is / darf ...": a length, not a duration. */
const LENGTH_VERBS = new Set('can is are may darf kann ist sind'.split(' '));
