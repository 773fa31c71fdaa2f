/**
 * @module core/openai/chat-wire
 * The Chat Completions wire format: the request body we send and what we read back (the
 * reply's text and, when the server reports them, its token counts).
 */

import {
  type CoreFinish,
  type CoreRequest,
  GATEWAY_PARAMETERS,
  type Json,
  type TokenUsage,
  type ToolCall,
  type Turn,
  type WireMessage,
} from '../core-adapter.js';
import type { BodyReading } from '../http/http-upstream.js';
import type { OpenAiCoreOptions } from './openai-config.js';

interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

export interface ChatCompletionRequest {
  readonly model: string;
  readonly messages: readonly (ChatMessage | WireMessage)[];
  readonly temperature?: number;
  readonly top_p?: number;
  readonly max_tokens?: number;
  readonly stop?: readonly string[];
  readonly user?: string;
  readonly stream: boolean;
  readonly stream_options?: { readonly include_usage: true };
  readonly response_format?: Json;
  readonly tools?: Json;
  readonly tool_choice?: Json;
  readonly parallel_tool_calls?: Json;
}

/**
 * System prompt of the request's language, then the client's own instructions, then the
 * memory window as user/assistant pairs (oldest first; an empty side of a pair is left out),
 * then the new message. Sampling: the client's choice, else the operator's; `max_tokens` is
 * the smaller of the two (the operator's is a cap). Unset options are left out so the
 * server's own defaults (often tuned per model) apply. Streamed: the server is asked for
 * its token counts in a last chunk (`stream_options.include_usage`).
 */
export function buildChatRequest(
  options: OpenAiCoreOptions,
  request: CoreRequest,
  stream = false,
  model = options.model,
): ChatCompletionRequest {
  const messages: (ChatMessage | WireMessage)[] = [
    { role: 'system', content: options.systemPrompts[request.language] },
  ];
  for (const instruction of request.instructions ?? []) {
    messages.push({ role: 'system', content: instruction });
  }
  for (const turn of withoutOrphans(request.history)) {
    if (turn.wire !== undefined) {
      messages.push(...turn.wire);
      continue;
    }
    if (turn.message !== '') messages.push({ role: 'user', content: turn.message });
    if (turn.reply !== '') messages.push({ role: 'assistant', content: turn.reply });
  }
  if (request.input !== undefined) messages.push(...request.input);
  else messages.push({ role: 'user', content: request.message });
  const sampling = request.sampling ?? {};
  const temperature = sampling.temperature ?? options.temperature;
  const maxTokens = smaller(sampling.maxTokens, options.maxTokens);
  // Built field by field (in OpenAI's order), not from spreads: see
  // test/house/object-literals.test.ts.
  const body: { -readonly [K in keyof ChatCompletionRequest]?: ChatCompletionRequest[K] } = {
    model,
    messages,
  };
  if (temperature !== undefined) body.temperature = temperature;
  if (sampling.topP !== undefined) body.top_p = sampling.topP;
  if (maxTokens !== undefined) body.max_tokens = maxTokens;
  if (sampling.stop !== undefined) body.stop = sampling.stop;
  if (sampling.user !== undefined) body.user = sampling.user;
  // The client's own parameters for the model, unchanged (docs/contract.md,
  // "OpenAI-compatible door").
  for (const name of GATEWAY_PARAMETERS) {
    const value = request.gateway?.[name];
    if (value !== undefined) body[name] = value;
  }
  body.stream = stream;
  if (stream) body.stream_options = { include_usage: true };
  return body as ChatCompletionRequest;
}

/**
 * The history without the turns at its start that answer tool calls the window no longer
 * holds: an upstream refuses tool results whose call it was not sent.
 */
function withoutOrphans(history: readonly Turn[]): readonly Turn[] {
  let start = 0;
  while (start < history.length && history[start]?.wire?.[0]?.role === 'tool') start++;
  return start === 0 ? history : history.slice(start);
}

function smaller(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

export interface ChatReply {
  readonly text: string;
  readonly usage: TokenUsage | undefined;
  /** The finish reason and tool calls, when the answer called tools or did not just stop. */
  readonly finish: CoreFinish | undefined;
  /** The model the upstream says answered (`gen_ai.response.model`), when it says. */
  readonly model?: string;
}

/**
 * Reads `choices[0].message.content` as a trimmed string, non-empty unless the message
 * carries tool calls, its `tool_calls` and `finish_reason`, and `usage` if any.
 */
export function parseChatReply(body: string): BodyReading<ChatReply> {
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
  const toolCalls = readToolCalls(first.message.tool_calls);
  if (toolCalls === 'invalid')
    return { ok: false, problem: 'choices[0].message.tool_calls is malformed' };
  const content = first.message.content;
  const none = content === null || content === undefined;
  if (typeof content !== 'string' && !(none && toolCalls !== undefined)) {
    return { ok: false, problem: 'choices[0].message.content is not a string' };
  }
  const reply = typeof content === 'string' ? content.trim() : '';
  if (reply === '' && toolCalls === undefined) {
    return { ok: false, problem: 'choices[0].message.content is empty' };
  }
  const reason = typeof first.finish_reason === 'string' ? first.finish_reason : 'stop';
  const finish =
    toolCalls !== undefined ? { reason, toolCalls } : reason !== 'stop' ? { reason } : undefined;
  const value: ChatReply = { text: reply, usage: readUsage(json.usage), finish };
  return {
    ok: true,
    value: typeof json.model === 'string' ? { ...value, model: json.model } : value,
  };
}

/** A non-empty `tool_calls` array of function calls; undefined when there is none. */
function readToolCalls(value: unknown): readonly ToolCall[] | undefined | 'invalid' {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return 'invalid';
  if (value.length === 0) return undefined;
  const calls: ToolCall[] = [];
  for (const call of value) {
    if (!isObject(call) || typeof call.id !== 'string' || !isObject(call.function))
      return 'invalid';
    const { name, arguments: args } = call.function;
    if (typeof name !== 'string' || typeof args !== 'string') return 'invalid';
    calls.push({ id: call.id, type: 'function', function: { name, arguments: args } });
  }
  return calls;
}

/** `{prompt_tokens, completion_tokens}` as non-negative integers, else undefined. */
export function readUsage(value: unknown): TokenUsage | undefined {
  if (!isObject(value)) return undefined;
  const { prompt_tokens: prompt, completion_tokens: completion } = value;
  if (!isCount(prompt) || !isCount(completion)) return undefined;
  return { promptTokens: prompt, completionTokens: completion };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
