/**
 * @module cli/ask-command
 * `plauder ask [--lang de|en] [--explain] MESSAGE...`: asks the built-in core, with the
 * knowledge base and the facts of this configuration, and prints the reply. Several
 * messages are one conversation (each sees the earlier ones, as in a session). With
 * `--explain`, also why: the state taken from the conversation, the parts of the message,
 * the words recognised and the entries scored.
 */
import { readBuiltinCoreConfig } from '../core/builtin/builtin-config.js';
import type { Explanation } from '../core/builtin/conversation/reply-composer.js';
import {
  type BuiltinCore,
  createBuiltinCore,
  KnowledgeBaseError,
} from '../core/builtin/create-builtin-core.js';
import type { KnowledgeIndex } from '../core/builtin/knowledge/knowledge-index.js';
import type { Match, QueryUnit } from '../core/builtin/matching/matcher.js';
import type { Language, Turn } from '../core/core-adapter.js';
import { CliError, type CliIo } from './cli-context.js';
import { type Command, usageError } from './command-line.js';

const SHOWN_CANDIDATES = 4;

function wordsOf(index: KnowledgeIndex): Map<number, string> {
  const words = new Map<number, string>();
  for (const [form, concept] of index.forms) {
    const known = words.get(concept);
    if (known === undefined || form.length > known.length) words.set(concept, form);
  }
  return words;
}

function describeUnits(units: readonly QueryUnit[], words: Map<number, string>): string {
  return units
    .map((unit) => {
      const name = unit.concepts.map((c) => words.get(c) ?? `#${c}`).join('|') || '?';
      const notes = [
        unit.weight < 1 ? `carried ×${unit.weight.toFixed(1)}` : '',
        unit.certainty < 1 ? 'typo' : '',
      ]
        .filter((note) => note !== '')
        .join(', ');
      return notes === '' ? name : `${name} (${notes})`;
    })
    .join(' ');
}

function describeCandidates(candidates: readonly Match[]): string[] {
  return candidates
    .slice(0, SHOWN_CANDIDATES)
    .map((match) => `      ${match.confidence.toFixed(3)}  [${match.entry.entry.id}]`);
}

function explanationLines(explanation: Explanation, index: KnowledgeIndex): string[] {
  const words = wordsOf(index);
  const { state, analysis } = explanation;
  const lines = [
    '  state:',
    `    name: ${state.name?.full ?? '-'}`,
    `    topic: ${state.context.topics.map((entry) => `[${entry.entry.id}]`).join(' ') || '-'}`,
    `    previous question: ${describeUnits(state.context.previous, words) || '-'}`,
  ];
  if (explanation.refused !== undefined) return [...lines, `  refused: ${explanation.refused}`];
  if (analysis === undefined) return lines;
  lines.push(`  name stated: ${analysis.statement?.full ?? '-'}`);
  lines.push(
    `  small talk: ${analysis.kinds.join(', ') || '-'}${analysis.upset ? '  (rude or frustrated)' : ''}`,
  );
  analysis.clauses.forEach((clause, i) => {
    const { reading } = clause;
    const outcome =
      reading.outcome.kind === 'answer'
        ? `answer [${reading.outcome.match.entry.entry.id}]`
        : reading.outcome.kind === 'clarify'
          ? `clarify ${reading.outcome.options.map((m) => `[${m.entry.entry.id}]`).join(' or ')}`
          : 'no entry fits';
    lines.push(
      `  question ${i + 1}${clause.question ? '' : ' (statement)'}${reading.followUp ? ', read as a follow-up' : ''}: ${outcome}`,
    );
    lines.push(`    words: ${describeUnits(reading.units, words) || '-'}`);
    lines.push('    scores:', ...describeCandidates(reading.candidates));
  });
  return lines;
}

export const askCommand: Command = {
  path: 'ask',
  summary:
    'Ask the built-in core, with its knowledge base and the facts of this configuration, and print the reply. Several messages are one conversation.',
  args: [{ name: 'MESSAGE', help: 'a message; give several for a conversation', variadic: true }],
  options: {
    lang: { type: 'string', value: 'de|en', help: 'the language of the replies (default de)' },
    explain: { type: 'boolean', help: 'also print why: the state, the words, the scores' },
  },
  details: 'Example:\n  plauder ask --lang en "How many requests do I get?" "And on plus?"',
  run: ({ values, positionals }, env, io) =>
    ask(String(values.lang ?? 'de'), values.explain === true, positionals, env, io),
};

async function ask(
  lang: string,
  explain: boolean,
  positionals: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
): Promise<void> {
  if (lang !== 'de' && lang !== 'en')
    throw usageError(askCommand, `--lang: expected de or en, got "${lang}"`);
  const language: Language = lang;
  if (positionals.some((m) => m.trim() === '')) throw usageError(askCommand, 'a MESSAGE is empty');
  const problems: string[] = [];
  const options = readBuiltinCoreConfig(env, problems);
  if (problems.length > 0) throw new CliError(problems.join('\n'), 2);
  let core: BuiltinCore;
  try {
    core = createBuiltinCore(options);
  } catch (error) {
    if (error instanceof KnowledgeBaseError) throw new CliError(error.message, 1);
    throw error;
  }
  const history: Turn[] = [];
  for (const message of positionals) {
    const explanation = core.explain(language, message, history);
    if (positionals.length > 1 || explain) io.out(`> ${message}`);
    io.out(explanation.reply);
    if (explain) io.out(explanationLines(explanation, core.index()).join('\n'));
    if (positionals.length > 1 || explain) io.out('');
    history.push({ message, reply: explanation.reply, language });
  }
}
