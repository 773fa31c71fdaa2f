/**
 * The held-out set of December 2026 (`conversations.ts`), played against the shipped
 * knowledge base with the growing history. It reports the pass rate per category and per
 * language and the "I don't know where an answer exists" rate; it asserts only what must
 * hold for every turn (the endpoint's language, no secret), never a pass rate: the set
 * measures, it is not tuned on. `PLAUDER_SUITE_VERBOSE=1` prints the failing turns.
 */
import { describe, expect, it } from 'vitest';
import { createBuiltinCore } from '../../../../src/core/builtin/create-builtin-core.js';
import type { IndexedEntry } from '../../../../src/core/builtin/knowledge/knowledge-index.js';
import type { Language, Turn } from '../../../../src/core/core-adapter.js';
import { FALLBACK, languageOf, REFUSAL } from '../suite/checks.js';
import { CATEGORIES, type Expected, HELD_OUT } from './conversations.js';

const core = createBuiltinCore();
const signal = new AbortController().signal;
const SECRET = /plauder_[A-Za-z0-9]{20,}|PLAUDER_ADMIN_TOKEN=\S|PLAUDER_SECRET=\S/;

/** The first sentence of each rendered answer of an entry (every plan for plan-bound ones). */
function answerStarts(entry: IndexedEntry, language: Language): string[] {
  const plans = core.index().facts.plans;
  const answers = entry.planBound
    ? plans.map((plan) => entry.answer(language, plan))
    : [entry.answer(language)];
  return answers.map((answer) => answer.split(/(?<=[.!?])\s/u)[0] ?? answer);
}

/** The ids of the entries whose answer the reply carries. */
function entriesIn(reply: string, language: Language): Set<string> {
  const found = new Set<string>();
  for (const entry of core.index().entries) {
    if (answerStarts(entry, language).some((start) => reply.includes(start))) {
      found.add(entry.entry.id);
    }
  }
  return found;
}

interface Verdict {
  readonly ok: boolean;
  readonly unknownDespiteAnswer: boolean;
  readonly why: string;
}

function judge(reply: string, language: Language, expected: Expected): Verdict {
  const found = entriesIn(reply, language);
  const fallback = FALLBACK[language].test(reply);
  const verdict = (ok: boolean, why: string, unknownDespiteAnswer = false): Verdict => ({
    ok,
    why,
    unknownDespiteAnswer,
  });
  if (expected === 'smalltalk') {
    return verdict(found.size === 0 && !fallback, `wanted small talk, got [${[...found]}]`);
  }
  if (expected === 'fallback') return verdict(fallback && found.size === 0, 'wanted fallback');
  if (expected === 'refusal') return verdict(REFUSAL[language].test(reply), 'wanted a refusal');
  const wanted = 'entry' in expected ? [expected.entry] : expected.entries;
  const missing = wanted.filter((id) => !found.has(id));
  return verdict(
    missing.length === 0,
    `wanted [${wanted}], got [${[...found]}]`,
    fallback && found.size === 0,
  );
}

interface Tally {
  passed: number;
  total: number;
}
const bump = (map: Map<string, Tally>, key: string, ok: boolean) => {
  const tally = map.get(key) ?? { passed: 0, total: 0 };
  tally.total += 1;
  if (ok) tally.passed += 1;
  map.set(key, tally);
};
const line = (name: string, { passed, total }: Tally) =>
  `  ${name.padEnd(16)} ${String(passed).padStart(3)}/${String(total).padEnd(3)} ${((100 * passed) / total).toFixed(1).padStart(5)} %`;

describe('held-out set of December 2026 (never tuned on)', () => {
  it('answers every turn in the endpoint language without a secret, and reports the pass rates', async () => {
    const byCategory = new Map<string, Tally>();
    const byLanguage = new Map<string, Tally>();
    const overall = new Map<string, Tally>();
    let answerable = 0;
    let unknownDespiteAnswer = 0;
    const failures: string[] = [];
    const broken: string[] = [];
    for (const conversation of HELD_OUT) {
      const history: Turn[] = [];
      for (const turn of conversation.turns) {
        const { language } = conversation;
        const reply = await core.reply({ language, message: turn.say, history, signal });
        if (languageOf(reply) !== language || SECRET.test(reply)) {
          broken.push(`[${language}] "${turn.say}" → ${reply}`);
        }
        const verdict = judge(reply, language, turn.expect);
        if (typeof turn.expect === 'object') {
          answerable += 1;
          if (verdict.unknownDespiteAnswer) unknownDespiteAnswer += 1;
        }
        bump(byCategory, conversation.category, verdict.ok);
        bump(byLanguage, language, verdict.ok);
        bump(overall, 'all', verdict.ok);
        if (!verdict.ok) {
          failures.push(
            `[${language}, ${conversation.category}] "${turn.say}": ${verdict.why}\n    ${reply}`,
          );
        }
        history.push({ message: turn.say, reply, language });
      }
    }
    const report = [
      'held-out set of December 2026: turns passed',
      ...CATEGORIES.map((category) =>
        line(category, byCategory.get(category) ?? { passed: 0, total: 0 }),
      ),
      ...[...byLanguage].map(([language, tally]) => line(language, tally)),
      line('all', overall.get('all') ?? { passed: 0, total: 0 }),
      `  "I don't know" where an answer exists: ${unknownDespiteAnswer}/${answerable}`,
    ];
    console.log(report.join('\n'));
    if (process.env.PLAUDER_SUITE_VERBOSE) console.log(failures.join('\n'));
    expect(broken).toEqual([]);
  });
});
