/**
 * @module test/core/builtin/suite/run-suite
 * Plays a conversation suite against a core, turn by turn with the growing history, and
 * counts the passed turns per category.
 */
import type { CoreAdapter, Language, Turn } from '../../../../src/core/core-adapter.js';
import { type Expectation, judge } from './checks.js';
import type { SuiteTurn } from './plauder-suite.js';

export interface PlayableConversation<C extends string> {
  readonly category: C;
  readonly language: Language;
  readonly session?: boolean;
  readonly turns: readonly SuiteTurn[];
}

/**
 * The short forms the suites are written in, for one suite's categories: `t` a turn (with
 * the endpoint's language where it differs), `one` a conversation of one turn, `conv` one of
 * several.
 */
export function conversationBuilders<C extends string>() {
  const t = (say: string, expect: Expectation, language?: Language): SuiteTurn =>
    language === undefined ? { say, expect } : { say, expect, language };
  return {
    t,
    one: (
      category: C,
      language: Language,
      say: string,
      expect: Expectation,
    ): PlayableConversation<C> => ({ category, language, turns: [t(say, expect)] }),
    conv: (category: C, language: Language, ...turns: SuiteTurn[]): PlayableConversation<C> => ({
      category,
      language,
      turns,
    }),
  };
}

export interface CategoryResult {
  passed: number;
  total: number;
  readonly failures: string[];
}

const signal = new AbortController().signal;

export async function runSuite<C extends string>(
  core: CoreAdapter,
  suite: readonly PlayableConversation<C>[],
): Promise<Map<C, CategoryResult>> {
  const results = new Map<C, CategoryResult>();
  for (const conversation of suite) {
    const history: Turn[] = [];
    const result = results.get(conversation.category) ?? { passed: 0, total: 0, failures: [] };
    results.set(conversation.category, result);
    for (const turn of conversation.turns) {
      const language = turn.language ?? conversation.language;
      const past = conversation.session === false ? [] : history;
      const reply = await core.reply({ language, message: turn.say, history: past, signal });
      const problems = judge(reply, language, turn.expect);
      result.total += 1;
      if (problems.length === 0) result.passed += 1;
      else
        result.failures.push(
          `[${language}, ${conversation.category}] "${turn.say}"\n      ${problems.join('; ')}\n      reply: ${reply}`,
        );
      history.push({ message: turn.say, reply, language });
    }
  }
  return results;
}

/** One line per category: passed / total and the rate. */
export function formatResults<C extends string>(
  title: string,
  results: Map<C, CategoryResult>,
): string {
  const lines = [title];
  let passed = 0;
  let total = 0;
  for (const [category, result] of results) {
    passed += result.passed;
    total += result.total;
    const rate = ((100 * result.passed) / result.total).toFixed(1).padStart(5);
    lines.push(
      `  ${category.padEnd(28)} ${String(result.passed).padStart(3)}/${String(result.total).padEnd(3)} ${rate} %`,
    );
  }
  lines.push(
    `  ${'all'.padEnd(28)} ${String(passed).padStart(3)}/${String(total).padEnd(3)} ${((100 * passed) / total).toFixed(1).padStart(5)} %`,
  );
  return lines.join('\n');
}
