/**
 * `plauder kb check`'s hints on example questions: entries with too few, and examples the
 * assistant answers with another entry or not at all.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createBuiltinCore } from '../../../src/core/builtin/create-builtin-core.js';
import { reviewKnowledgeBase } from '../../../src/core/builtin/knowledge-review.js';

const dir = mkdtempSync(join(tmpdir(), 'plauder-review-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function review(text: string) {
  const file = join(dir, `kb-${Math.random().toString(36).slice(2)}.kb`);
  writeFileSync(file, text);
  return reviewKnowledgeBase(createBuiltinCore({ knowledgePath: file })).map(
    (note) => `${note.line}: ${note.detail}`,
  );
}

describe('hints on example questions', () => {
  it('has none for the shipped knowledge base', () => {
    expect(reviewKnowledgeBase(createBuiltinCore())).toEqual([]);
  });

  it('names entries with too few examples, and examples another entry answers', () => {
    const notes = review(`[shipping]
topic-de: Versand
topic-en: shipping
example: Wie lange dauert der Versand?
example: How long does shipping take?
example: What does shipping cost?
de: Zwei Tage.
en: Two days.

[costs]
topic-de: Versandkosten
topic-en: shipping costs
example: What does shipping cost?
keywords: kosten, cost, preis, price
de: 4,90 Euro.
en: 4.90 euros.
`);
    expect(notes).toEqual([
      '6: example "What does shipping cost?" of [shipping] is answered by [costs]: make the two entries\' examples and keywords more distinct',
      "10: entry [costs] has 1 example question; write at least 3, in the users' words and in both languages",
    ]);
  });
});
