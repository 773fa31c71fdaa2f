import { describe, expect, it } from 'vitest';
import { createBuiltinCore } from '../../../src/core/builtin/create-builtin-core.js';
import type { CoreAdapter, Language, Turn } from '../../../src/core/core-adapter.js';
import { type Conversation, conversations, replyProblems } from './conversations.js';

const core: CoreAdapter = createBuiltinCore();
const signal = new AbortController().signal;

/** Plays the conversation turn by turn, carrying the history as the HTTP service would. */
async function play(conversation: Conversation): Promise<string[]> {
  const history: Turn[] = [];
  const problems: string[] = [];
  for (const [i, turn] of conversation.turns.entries()) {
    const language: Language = turn.language ?? conversation.language;
    const past = conversation.session === false ? [] : history;
    const reply = await core.reply({ language, message: turn.message, history: past, signal });
    for (const problem of replyProblems(turn, reply)) {
      problems.push(`turn ${i + 1} "${turn.message}": ${problem}\n    reply: ${reply}`);
    }
    history.push({ message: turn.message, reply, language });
  }
  return problems;
}

describe('built-in core conversations', () => {
  it.each(conversations.map((c) => [c.name, c] as const))('%s', async (_name, conversation) => {
    expect(await play(conversation)).toEqual([]);
  });

  it('covers every entry of the shipped knowledge base in both languages', async () => {
    // Each entry's answer must be reached by some single-question case per language.
    const { loadKnowledgeBase } = await import(
      '../../../src/core/builtin/knowledge/knowledge-parser.js'
    );
    const { DEFAULT_KNOWLEDGE_PATH } = await import('../../../src/core/builtin/builtin-config.js');
    const base = loadKnowledgeBase(DEFAULT_KNOWLEDGE_PATH);
    const reached = new Set<string>();
    for (const conversation of conversations) {
      const history: Turn[] = [];
      for (const turn of conversation.turns) {
        const language = turn.language ?? conversation.language;
        const reply = await core.reply({ language, message: turn.message, history, signal });
        for (const entry of base.entries) {
          if (reply.includes(entry.answer[language])) reached.add(`${entry.id}/${language}`);
        }
        if (conversation.session !== false)
          history.push({ message: turn.message, reply, language });
      }
    }
    const missing = base.entries
      .flatMap((entry) => [`${entry.id}/de`, `${entry.id}/en`])
      .filter((key) => !reached.has(key));
    expect(missing).toEqual([]);
  });
});
