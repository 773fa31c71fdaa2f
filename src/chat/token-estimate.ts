/**
 * @module chat/token-estimate
 * Token counts for a reply whose core does not count (the built-in and rasa cores, an
 * upstream that reports no usage). OpenAI's rule of thumb: a token is about four characters
 * of English text. The prompt counts what the turn sent to the core: the client's
 * instructions, the history and the message (not an operator's system prompt, which the
 * client never sees); the completion counts the reply. Every non-empty text is at least one
 * token. An estimate, documented as such in docs/openai.md.
 */
import type { CoreRequest, TokenUsage } from '../core/core-adapter.js';
import { codePointLength } from '../util/code-points.js';
import type { HeldReply } from './reply-text.js';

const CHARACTERS_PER_TOKEN = 4;

type Prompt = Pick<CoreRequest, 'message' | 'history' | 'instructions'>;

export function estimateUsage(prompt: Prompt | undefined, reply: HeldReply): TokenUsage {
  let promptTokens = 0;
  if (prompt !== undefined) {
    promptTokens += estimateTokens(prompt.message);
    for (const text of prompt.instructions ?? []) promptTokens += estimateTokens(text);
    for (const turn of prompt.history) {
      promptTokens += estimateTokens(turn.message) + estimateTokens(turn.reply);
    }
  }
  const replyCodePoints = typeof reply === 'string' ? codePointLength(reply) : reply.codePoints();
  return { promptTokens, completionTokens: tokensOf(replyCodePoints) };
}

export function estimateTokens(text: string): number {
  return tokensOf(codePointLength(text));
}

function tokensOf(codePoints: number): number {
  if (codePoints === 0) return 0;
  return Math.max(1, Math.ceil(codePoints / CHARACTERS_PER_TOKEN));
}
