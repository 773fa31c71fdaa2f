/**
 * @module routes/v1/messages/messages-answer
 * The answers of `/v1/messages` in Anthropic's shapes (docs/contract.md, "Anthropic's
 * Messages door"): a `message` object, the events of a stream, and errors as
 * `{"type": "error", "error": {type, message}}` with the statuses Anthropic's clients map to
 * their error classes. Everything comes from the turn's decision (its id, reply, tool calls,
 * finish and usage), so a replayed idempotent outcome is rendered as the first time.
 *
 * The `openai` core answers in Chat Completions' terms; here they become Anthropic's:
 * `tool_calls` → `tool_use` blocks, `finish_reason` → `stop_reason`, streamed tool-call
 * deltas → `content_block_start` and `input_json_delta`.
 */
import type { TurnStamp } from '../../../chat/take-turn.js';
import type { CoreFinish, JsonObject, TokenUsage, ToolCall } from '../../../core/core-adapter.js';
import { ERROR_MESSAGES, type ErrorCode } from '../../../errors/error-codes.js';
import type { EventStream } from '../../event-stream.js';
import type { StreamDoor } from '../../turn-stream.js';
import { MODEL_NOT_FOUND, type OpenAiErrorCode } from '../completion-answer.js';

export type AnthropicError = {
  readonly type: 'error';
  readonly error: {
    readonly type: string;
    readonly message: string;
    /** plauder's own code (`quota_exceeded`, ...), read by Anthropic's SDK as `errorCode`. */
    readonly details: { readonly error_code: string };
  };
  readonly request_id: string;
};

/** The Anthropic error `type` and the HTTP status of each code a `/v1/messages` request can end with. */
export function anthropicStatus(code: OpenAiErrorCode): { status: number; type: string } {
  switch (code) {
    case 'invalid_api_key':
      return { status: 401, type: 'authentication_error' };
    case 'plan_inactive':
      return { status: 403, type: 'permission_error' };
    case 'quota_exceeded':
    case 'rate_limited':
    case 'token_budget_exceeded':
    case 'too_many_concurrent':
      return { status: 429, type: 'rate_limit_error' };
    case 'not_found':
    case MODEL_NOT_FOUND:
      return { status: 404, type: 'not_found_error' };
    case 'method_not_allowed':
      return { status: 405, type: 'invalid_request_error' };
    case 'request_timeout':
      return { status: 408, type: 'timeout_error' };
    case 'idempotency_key_in_flight':
    case 'key_revoked':
      return { status: 409, type: 'invalid_request_error' };
    case 'payload_too_large':
      return { status: 413, type: 'request_too_large' };
    case 'idempotency_key_reused':
      return { status: 422, type: 'invalid_request_error' };
    case 'internal_error':
    case 'core_unavailable':
    case 'core_timeout':
      return { status: 500, type: 'api_error' };
    case 'service_unavailable':
      return { status: 503, type: 'overloaded_error' };
    default:
      return { status: 400, type: 'invalid_request_error' };
  }
}

export function anthropicError(
  code: OpenAiErrorCode,
  message: string,
  requestId: string,
): AnthropicError {
  const { type } = anthropicStatus(code);
  return {
    type: 'error',
    error: { type, message, details: { error_code: code } },
    request_id: requestId,
  };
}

/** An error of ours in Anthropic's shape, with its status. */
export function anthropicErrorOf(
  code: ErrorCode,
  requestId: string,
): { status: number; body: AnthropicError } {
  const { status } = anthropicStatus(code);
  return { status, body: anthropicError(code, ERROR_MESSAGES[code], requestId) };
}

/** `msg_` and the turn id without its dashes: stable for a turn, replays included. */
function messageId(stamp: TurnStamp): string {
  return `msg_${stamp.turnId.replaceAll('-', '')}`;
}

/**
 * Chat Completions' `finish_reason` as Anthropic's `stop_reason`. An upstream does not say
 * whether a stop sequence or the model ended the text: both are `end_turn`.
 */
function stopReason(finish: CoreFinish | undefined): string {
  switch (finish?.reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    default:
      return finish?.toolCalls === undefined ? 'end_turn' : 'tool_use';
  }
}

function usageOf(usage: TokenUsage) {
  return { input_tokens: usage.promptTokens, output_tokens: usage.completionTokens };
}

/** A tool call's arguments as the object Anthropic's `input` is; `{}` for arguments that are no JSON object. */
function inputOf(call: ToolCall): JsonObject {
  try {
    const input: unknown = JSON.parse(call.function.arguments);
    if (typeof input === 'object' && input !== null && !Array.isArray(input)) {
      return input as JsonObject;
    }
  } catch {
    // An upstream's broken arguments: the tool gets no input rather than the turn failing.
  }
  return {};
}

function toolUse(call: ToolCall) {
  return { type: 'tool_use', id: call.id, name: call.function.name, input: inputOf(call) };
}

export function messageObject(
  stamp: TurnStamp,
  model: string,
  reply: string,
  usage: TokenUsage,
  finish: CoreFinish | undefined,
) {
  const content: object[] = reply === '' ? [] : [{ type: 'text', text: reply }];
  for (const call of finish?.toolCalls ?? []) content.push(toolUse(call));
  return {
    id: messageId(stamp),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason(finish),
    stop_sequence: null,
    usage: usageOf(usage),
  };
}

/**
 * The events of a streamed message, as Anthropic sends them: `message_start` at once (the
 * opening: it delivers nothing, so a client that leaves after it costs nothing), then per
 * content block `content_block_start`, its deltas and `content_block_stop` (a `ping` after
 * the first start), then `message_delta` with the stop reason and the usage, and
 * `message_stop`; or an `error` event when the core failed after the stream began.
 * `inputTokens` is the door's estimate for `message_start`; `message_delta` carries the
 * turn's own counts.
 */
export function messagesEvents(model: string, inputTokens: number): StreamDoor {
  return (events, stamp) => {
    const blocks = new BlockWriter(events);
    const start = {
      type: 'message_start',
      message: {
        id: messageId(stamp),
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: inputTokens, output_tokens: 0 },
      },
    };
    events.open(JSON.stringify(start), 'message_start');
    return {
      delta: (text) => blocks.text(text),
      toolCalls: (deltas) => blocks.toolCalls(deltas),
      done: ({ usage, finish }) => {
        blocks.close();
        const delta = { stop_reason: stopReason(finish), stop_sequence: null };
        send(events, { type: 'message_delta', delta, usage: usageOf(usage) });
        send(events, { type: 'message_stop' });
      },
      error: (code, requestId) => {
        blocks.close();
        send(events, anthropicErrorOf(code, requestId).body);
      },
      replay: ({ reply, finish }) => {
        if (reply !== '') blocks.text(reply);
        for (const call of finish?.toolCalls ?? []) blocks.wholeToolUse(call);
      },
    };
  };
}

/** An event named by its `type`, as Anthropic's clients read them (an unnamed event is skipped). */
function send(
  events: EventStream,
  data: { readonly type: string; readonly [field: string]: unknown },
): void {
  events.send(JSON.stringify(data), data.type);
}

/**
 * The content blocks of a stream: one open at a time, a text block for text, a `tool_use`
 * block for each tool call (Chat Completions streams a call's id and name first, then its
 * arguments in pieces, by `index`).
 */
class BlockWriter {
  private count = 0;
  private open: { readonly index: number; readonly kind: 'text' | number } | undefined;
  /** The block of each tool call, by its Chat Completions index. */
  private readonly toolBlocks = new Map<number, number>();

  constructor(private readonly events: EventStream) {}

  text(text: string): void {
    const index =
      this.open?.kind === 'text' ? this.open.index : this.begin('text', { type: 'text', text: '' });
    send(this.events, { type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
  }

  toolCalls(deltas: readonly JsonObject[]): void {
    for (const delta of deltas) {
      const call = typeof delta.index === 'number' ? delta.index : this.toolBlocks.size;
      const fn = isObject(delta.function) ? delta.function : {};
      let index = this.toolBlocks.get(call);
      if (index === undefined) {
        const id = typeof delta.id === 'string' ? delta.id : `toolu_${this.count}`;
        const name = typeof fn.name === 'string' ? fn.name : '';
        index = this.begin(call, { type: 'tool_use', id, name, input: {} });
        this.toolBlocks.set(call, index);
      }
      const args = fn.arguments;
      if (typeof args === 'string' && args !== '') this.inputJson(index, args);
    }
  }

  /** A kept tool call, replayed: its block with the whole input in one delta. */
  wholeToolUse(call: ToolCall): void {
    const { id, name } = toolUse(call);
    const index = this.begin(-1 - this.count, { type: 'tool_use', id, name, input: {} });
    this.inputJson(index, JSON.stringify(inputOf(call)));
  }

  close(): void {
    if (this.open === undefined) return;
    send(this.events, { type: 'content_block_stop', index: this.open.index });
    this.open = undefined;
  }

  private inputJson(index: number, partial: string): void {
    const delta = { type: 'input_json_delta', partial_json: partial };
    send(this.events, { type: 'content_block_delta', index, delta });
  }

  private begin(kind: 'text' | number, block: object): number {
    this.close();
    const index = this.count++;
    this.open = { index, kind };
    send(this.events, { type: 'content_block_start', index, content_block: block });
    // Anthropic pings once the first block has begun.
    if (index === 0) send(this.events, { type: 'ping' });
    return index;
  }
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
