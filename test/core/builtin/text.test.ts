import { describe, expect, it } from 'vitest';
import { DEFAULT_KNOWLEDGE_PATH } from '../../../src/core/builtin/builtin-config.js';
import { loadKnowledgeIndex } from '../../../src/core/builtin/create-builtin-core.js';
import {
  createTermResolver,
  TYPO_CERTAINTY,
} from '../../../src/core/builtin/matching/term-resolver.js';
import { boundedEditDistance } from '../../../src/core/builtin/text/edit-distance.js';
import { englishBaseForm } from '../../../src/core/builtin/text/english-irregular.js';
import { stemEnglish, stemGerman } from '../../../src/core/builtin/text/stemmers.js';
import { tokenize } from '../../../src/core/builtin/text/tokenize.js';

// Reference pairs from the Snowball project's sample vocabularies.
const GERMAN: ReadonlyArray<readonly [string, string]> = [
  ['aufeinander', 'aufeinand'],
  ['aufeinanderfolgenden', 'aufeinanderfolg'],
  ['aufeinanderfolgten', 'aufeinanderfolgt'],
  ['aufeinanderschlügen', 'aufeinanderschlug'],
  ['kategorien', 'kategori'],
  ['kategorische', 'kategor'],
  ['käuflich', 'kauflich'],
  ['anfragen', 'anfrag'],
  ['anfrage', 'anfrag'],
  ['monats', 'monat'],
];
const ENGLISH: ReadonlyArray<readonly [string, string]> = [
  ['consigned', 'consign'],
  ['consistency', 'consist'],
  ['consolatory', 'consolatori'],
  ['consolingly', 'consol'],
  ['conspiracy', 'conspiraci'],
  ['constables', 'constabl'],
  ['generously', 'generous'],
  ['skies', 'sky'],
  ['hopping', 'hop'],
  ['hoping', 'hope'],
  ['requests', 'request'],
  ['rotated', 'rotat'],
];

describe('stemmers', () => {
  it.each(GERMAN)('German: %s → %s', (word, stem) => expect(stemGerman(word)).toBe(stem));
  it.each(ENGLISH)('English: %s → %s', (word, stem) => expect(stemEnglish(word)).toBe(stem));
});

describe('irregular English verb forms', () => {
  it('find their base form, leave regular words and auxiliaries alone', () => {
    expect(['kept', 'ran', 'written', 'took', 'paid'].map(englishBaseForm)).toEqual([
      'keep',
      'run',
      'write',
      'take',
      'pay',
    ]);
    for (const word of ['keep', 'asked', 'session', 'had', 'did', 'was', 'got']) {
      expect(englishBaseForm(word)).toBeUndefined();
    }
  });
});

describe('tokenize', () => {
  it('folds case, umlauts and ß, and splits on punctuation and hyphens', () => {
    expect(tokenize('Größe der Plus-Pläne?')).toEqual(['grosse', 'der', 'plus', 'plane']);
  });
  it('keeps identifiers with underscores whole and joins digit groups', () => {
    expect(tokenize('message_missing bei 1.000 oder 5,000')).toEqual([
      'message_missing',
      'bei',
      '1000',
      'oder',
      '5000',
    ]);
  });
  it('expands English contractions', () => {
    expect(tokenize("I'm sure it's what's don't can't")).toEqual([
      'i',
      'am',
      'sure',
      'it',
      'is',
      'what',
      'is',
      'do',
      'not',
      'can',
      'not',
    ]);
  });
  it('caps the number of tokens', () => {
    expect(tokenize('a '.repeat(500))).toHaveLength(120);
  });
});

describe('bounded edit distance', () => {
  it.each([
    ['anfrage', 'anfrage', 0],
    ['anfrgae', 'anfrage', 1],
    ['anfrag', 'anfrage', 1],
    ['anfrxage', 'anfrage', 1],
    ['schlusel', 'schlussel', 1],
    ['rotaet', 'rotate', 1],
    ['kontingnet', 'kontingent', 1],
    ['abcdef', 'ghijkl', 3],
  ] as const)('%s ↔ %s = %i (bounded by 2)', (a, b, distance) => {
    expect(boundedEditDistance(a, b, 2)).toBe(Math.min(distance, 3));
  });
});

describe('term resolution against the shipped vocabulary', () => {
  const index = loadKnowledgeIndex(DEFAULT_KNOWLEDGE_PATH);
  const resolver = createTermResolver(index);
  const conceptOf = (word: string) => index.forms.get(word);

  it('ignores stop words', () => {
    expect(resolver.resolve('und')).toBeNull();
    expect(resolver.resolve('the')).toBeNull();
  });
  it('finds inflected forms through their stems', () => {
    expect(resolver.resolve('anfragen')).toEqual([
      { concepts: [conceptOf('anfrage')], certainty: 1 },
    ]);
    expect(resolver.resolve('kostet')).toEqual([{ concepts: [conceptOf('kosten')], certainty: 1 }]);
  });
  it('splits German compounds into vocabulary words', () => {
    const parts = resolver.resolve('anfragelimit') ?? [];
    expect(parts.map((part) => part.concepts)).toEqual([
      [conceptOf('anfrage')],
      [conceptOf('limit')],
    ]);
    const linked = resolver.resolve('sitzungsdauer') ?? [];
    expect(linked.map((part) => part.concepts)).toEqual([
      [conceptOf('sitzung')],
      [conceptOf('dauer')],
    ]);
  });
  it('corrects one typo in words of five or more letters, with less certainty', () => {
    expect(resolver.resolve('kontignent')).toEqual([
      { concepts: [conceptOf('kontingent')], certainty: TYPO_CERTAINTY },
    ]);
  });
  it('corrects two typos only in words of nine or more letters', () => {
    expect(resolver.resolve('kontignnet')?.[0]?.concepts).toEqual([conceptOf('kontingent')]);
    expect(resolver.resolve('sesison')?.[0]?.concepts).toEqual([conceptOf('session')]);
    expect(resolver.resolve('sesisno')?.[0]?.concepts).toEqual([]);
  });
  it('does not correct words shorter than five letters', () => {
    expect(resolver.resolve('kye')?.[0]?.concepts).toEqual([]);
  });
  it('joins two tokens that form one vocabulary word', () => {
    expect(resolver.joined('time', 'zone')?.concepts).toEqual([conceptOf('zeitzone')]);
    expect(resolver.joined('pizza', 'zone')).toBeUndefined();
  });
});
