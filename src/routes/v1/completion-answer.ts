/**
 * @module routes/v1/completion-answer
 * The answers of `/v1` in OpenAI's shapes (docs/contract.md, "OpenAI-compatible door"): a `chat.completion`, the
 * `chat.completion.chunk`s of a stream, and errors as `{"error": {message, type, param,
 * code}}` with the statuses OpenAI's clients map to their error classes. Everything an
 * answer shows comes from the turn's decision (its id, time, reply and usage), so a replayed
 * idempotent outcome is rendered byte for byte as the first time.
 */
import type { TurnStamp } from '../../chat/take-turn.js';
import type { CoreFinish, JsonObject, TokenUsage } from '../../core/core-adapter.js';
import { ERROR_MESSAGES, type ErrorCode } from '../../errors/error-codes.js';
import type { StreamDoor } from '../turn-stream.js';

export interface OpenAiError {
  readonly error: {
    readonly message: string;
    readonly type: string;
    readonly param: string | null;
    readonly code: string | null;
  };
}

/** `/v1`'s own code for a model it does not offer (a `ProblemDetail.code`), as OpenAI's. */
export const MODEL_NOT_FOUND = 'model_not_found';

/** The codes a `/v1` error can carry: plauder's, and `model_not_found`. */
export type OpenAiErrorCode = ErrorCode | typeof MODEL_NOT_FOUND;

/** The OpenAI error `type` and the HTTP status of each code a `/v1` request can end with. */
export function openAiStatus(code: OpenAiErrorCode): { status: number; type: string } {
  switch (code) {
    case 'invalid_api_key':
      return { status: 401, type: 'invalid_request_error' };
    case 'plan_inactive':
      return { status: 403, type: 'permission_error' };
    case 'quota_exceeded':
      return { status: 429, type: 'insufficient_quota' };
    case 'rate_limited':
      return { status: 429, type: 'requests' };
    case 'token_budget_exceeded':
      return { status: 429, type: 'tokens' };
    case 'too_many_concurrent':
      return { status: 429, type: 'rate_limit_error' };
    case 'not_found':
    case MODEL_NOT_FOUND:
      return { status: 404, type: 'invalid_request_error' };
    case 'method_not_allowed':
      return { status: 405, type: 'invalid_request_error' };
    case 'idempotency_key_in_flight':
    case 'key_revoked':
      return { status: 409, type: 'invalid_request_error' };
    case 'payload_too_large':
      return { status: 413, type: 'invalid_request_error' };
    case 'idempotency_key_reused':
      return { status: 422, type: 'invalid_request_error' };
    case 'internal_error':
    case 'core_unavailable':
    case 'core_timeout':
      return { status: 500, type: 'server_error' };
    case 'service_unavailable':
      return { status: 503, type: 'server_error' };
    default:
      return { status: 400, type: 'invalid_request_error' };
  }
}

export function openAiError(
  code: string,
  type: string,
  message: string,
  param: string | null = null,
): OpenAiError {
  return { error: { message, type, param, code } };
}

/** An error of ours in OpenAI's shape, with its status. */
export function openAiErrorOf(code: ErrorCode): { status: number; body: OpenAiError } {
  const { status, type } = openAiStatus(code);
  return { status, body: openAiError(code, type, ERROR_MESSAGES[code]) };
}

/** `chatcmpl-` and the turn id without its dashes: stable for a turn, replays included. */
function completionId(stamp: TurnStamp): string {
  return `chatcmpl-${stamp.turnId.replaceAll('-', '')}`;
}

function usageOf(usage: TokenUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

export function chatCompletion(
  stamp: TurnStamp,
  model: string,
  content: string,
  usage: TokenUsage,
  finish: CoreFinish | undefined,
) {
  const toolCalls = finish?.toolCalls;
  const message =
    toolCalls === undefined
      ? { role: 'assistant', content, refusal: null }
      : {
          role: 'assistant',
          content: content === '' ? null : content,
          refusal: null,
          tool_calls: toolCalls,
        };
  return {
    id: completionId(stamp),
    object: 'chat.completion',
    created: Math.floor(stamp.createdAt / 1000),
    model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finish?.reason ?? 'stop' }],
    usage: usageOf(usage),
  };
}

/**
 * The events of a streamed completion, as OpenAI sends them: the role chunk at once, each
 * delta, then a chunk with `finish_reason`, one with the usage and no choices (when asked
 * for; every chunk before then carries `"usage": null`) and `data: [DONE]`; or
 * `data: {"error": ...}` when the core failed after the stream began (OpenAI's clients raise
 * it as an APIError). A kept reply replays as one content delta and its tool calls.
 */
export function completionEvents(model: string, includeUsage: boolean): StreamDoor {
  return (events, stamp) => {
    const id = completionId(stamp);
    const created = Math.floor(stamp.createdAt / 1000);
    const object = 'chat.completion.chunk';
    // Each chunk written out in full rather than spread from a head: see
    // test/house/object-literals.test.ts.
    const chunk = (delta: object, finishReason: string | null = null) => {
      const choices = [{ index: 0, delta, logprobs: null, finish_reason: finishReason }];
      return JSON.stringify(
        includeUsage
          ? { id, object, created, model, choices, usage: null }
          : { id, object, created, model, choices },
      );
    };
    const toolCalls = (deltas: readonly JsonObject[]) => events.send(chunk({ tool_calls: deltas }));
    events.open(chunk({ role: 'assistant', content: '', refusal: null }));
    return {
      delta: (text) => events.send(chunk({ content: text })),
      toolCalls,
      done: ({ usage, finish }) => {
        events.send(chunk({}, finish?.reason ?? 'stop'));
        if (includeUsage) {
          const last = { id, object, created, model, choices: [], usage: usageOf(usage) };
          events.send(JSON.stringify(last));
        }
        events.send('[DONE]');
      },
      error: (code) => events.send(JSON.stringify(openAiErrorOf(code).body)),
      replay: ({ reply, finish }) => {
        if (reply !== '') events.send(chunk({ content: reply }));
        const calls = finish?.toolCalls;
        if (calls === undefined) return;
        toolCalls(
          calls.map((call, index) => ({
            index,
            id: call.id,
            type: call.type,
            function: { name: call.function.name, arguments: call.function.arguments },
          })),
        );
      },
    };
  };
}
