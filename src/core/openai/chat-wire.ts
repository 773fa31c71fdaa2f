/**
 * @module core/openai/chat-wire
 * The Chat Completions wire format: the request body we send and the one field we read back.
 */

import type { CoreRequest } from '../core-adapter.js';
import type { OpenAiCoreOptions } from './openai-config.js';

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

export interface ChatCompletionRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly temperature?: number;
  readonly max_tokens?: number;
  readonly stream: false;
}

/**
 * System prompt of the request's language, then the memory window as user/assistant pairs
 * (oldest first), then the new message. Unset sampling options are left out so the server's
 * own defaults (often tuned per model) apply.
 */
export function buildChatRequest(
  options: OpenAiCoreOptions,
  request: CoreRequest,
): ChatCompletionRequest {
  const messages: ChatMessage[] = [
    { role: 'system', content: options.systemPrompts[request.language] },
  ];
  for (const turn of request.history) {
    messages.push(
      { role: 'user', content: turn.message },
      { role: 'assistant', content: turn.reply },
    );
  }
  messages.push({ role: 'user', content: request.message });
  return {
    model: options.model,
    messages,
    ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
    ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
    stream: false,
  };
}

export type ParsedReply =
  | { readonly ok: true; readonly reply: string }
  /** `problem` names what was wrong, never the upstream's text: it goes to logs. */
  | { readonly ok: false; readonly problem: string };

/** Reads `choices[0].message.content` as a non-empty, trimmed string. */
export function parseChatReply(body: string): ParsedReply {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, problem: 'the reply body is not JSON' };
  }
  if (!isObject(json) || !Array.isArray(json.choices)) {
    return { ok: false, problem: 'the reply has no choices array' };
  }
  const first: unknown = json.choices[0];
  if (!isObject(first) || !isObject(first.message)) {
    return { ok: false, problem: 'choices[0].message is missing' };
  }
  const content = first.message.content;
  if (typeof content !== 'string') {
    return { ok: false, problem: 'choices[0].message.content is not a string' };
  }
  const reply = content.trim();
  return reply === ''
    ? { ok: false, problem: 'choices[0].message.content is empty' }
    : { ok: true, reply };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
