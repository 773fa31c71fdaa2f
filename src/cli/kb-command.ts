/**
 * @module cli/kb-command
 * `plauder kb check [FILE]`: checks a knowledge base of the built-in core (default: the
 * file `PLAUDER_KNOWLEDGE` names, else the shipped sample) and reports every problem at
 * once, each with its file and line, then hints on the example questions (too few, or answered
 * by another entry). Exit code 0 when the file is fine (hints or not), 1 when not.
 */
import { knowledgePathOf } from '../core/builtin/builtin-config.js';
import {
  createBuiltinCore,
  KnowledgeBaseError,
  loadKnowledgeIndex,
} from '../core/builtin/create-builtin-core.js';
import { reviewKnowledgeBase } from '../core/builtin/knowledge-review.js';
import { readServiceFacts } from '../core/builtin/service-facts.js';
import { CliError, type CliIo } from './cli-context.js';
import type { Command } from './command-line.js';

export const kbCommand: Command = {
  path: 'kb check',
  summary:
    'Check a knowledge base of the built-in core and report every problem at once, each with its file and line, then hints: entries with too few example questions, and examples another entry answers. Exit code 1 when the file has problems (hints do not count).',
  args: [
    {
      name: 'FILE',
      help: 'the file (default: PLAUDER_KNOWLEDGE, else the shipped knowledge/plauder.kb)',
      optional: true,
    },
  ],
  run: ({ positionals }, env, io) => check(positionals[0], env, io),
};

async function check(file: string | undefined, env: NodeJS.ProcessEnv, io: CliIo): Promise<void> {
  const path = knowledgePathOf(file ?? env.PLAUDER_KNOWLEDGE);
  try {
    const facts = readServiceFacts(env);
    const index = loadKnowledgeIndex(path, facts);
    const { entries, base } = index;
    io.out(`${path}: ok, ${entries.length} entries, ${base.synonyms.length} synonym groups`);
    // Advice, not problems: the file works, and the exit code stays 0.
    const notes = reviewKnowledgeBase(createBuiltinCore({ knowledgePath: path, facts }));
    for (const note of notes) io.out(`${path}:${note.line}: hint: ${note.detail}`);
    if (notes.length > 0)
      io.out(
        `${notes.length} hint${notes.length === 1 ? '' : 's'} (see knowledge/README.md, "Writing good entries")`,
      );
  } catch (error) {
    if (!(error instanceof KnowledgeBaseError)) throw error;
    const count = error.problems.length;
    throw new CliError(`${error.message}\n${count} problem${count === 1 ? '' : 's'} in ${path}`, 1);
  }
}
