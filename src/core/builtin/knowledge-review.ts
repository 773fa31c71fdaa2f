/**
 * @module core/builtin/knowledge-review
 * Advice on a knowledge base that loads (`plauder kb check`): entries with too few example
 * questions, and example questions that the assistant would answer with another entry, or
 * not at all. They are hints for the operator, not errors: the file works as it is.
 */
import type { BuiltinCore } from './create-builtin-core.js';

/** An entry learns its questions from this many examples at least. */
const MIN_EXAMPLES = 3;

export interface ReviewNote {
  readonly line: number;
  readonly detail: string;
}

/** The notes on the knowledge base `core` uses, in the order of the file. */
export function reviewKnowledgeBase(core: BuiltinCore): ReviewNote[] {
  const notes: ReviewNote[] = [];
  const plan = core.index().facts.plans[0]?.name;
  for (const { entry, planBound } of core.index().entries) {
    if (entry.examples.length < MIN_EXAMPLES) {
      notes.push({
        line: entry.line,
        detail: `entry [${entry.id}] has ${entry.examples.length} example question${entry.examples.length === 1 ? '' : 's'}; write at least ${MIN_EXAMPLES}, in the users' words and in both languages`,
      });
    }
    for (const example of entry.examples) {
      const reading = readAlone(core, example.text, planBound ? plan : undefined);
      if (reading === entry.id) continue;
      notes.push({
        line: example.line,
        detail:
          reading === undefined
            ? `example "${example.text}" of [${entry.id}] gets no answer: add keywords, synonyms or more examples`
            : `example "${example.text}" of [${entry.id}] is answered by [${reading}]: make the two entries' examples and keywords more distinct`,
      });
    }
  }
  return notes.sort((a, b) => a.line - b.line);
}

/** The entry that answers `question` asked on its own (a plan-bound one with a plan named). */
function readAlone(
  core: BuiltinCore,
  question: string,
  plan: string | undefined,
): string | undefined {
  const answered = (text: string) => {
    const clause = core
      .explain('en', text, [])
      .analysis?.clauses.find((c) => c.reading.outcome.kind === 'answer');
    return clause?.reading.outcome.kind === 'answer'
      ? clause.reading.outcome.match.entry.entry.id
      : undefined;
  };
  const id = answered(question);
  if (id !== undefined || plan === undefined) return id;
  return answered(`${question} ${plan}`);
}
