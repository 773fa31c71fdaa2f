/**
 * @module routes/mcp/turn-result
 * Renders a turn's decision (src/chat/take-turn.ts) as the result of the MCP tool `chat`.
 * A reply is text content; every other outcome is a result with `isError: true` and an
 * English message an agent can act on, led by the contract's error code. The use case has
 * decided whether anything counts; this only writes.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { TurnDecision } from '../../chat/take-turn.js';
import { ERROR_MESSAGES, type ErrorCode, type SoftErrorCode } from '../../errors/error-codes.js';
import type { QuotaState } from '../../quota/quota-service.js';

export function turnResult(decision: TurnDecision, messageMaxChars: number): CallToolResult {
  switch (decision.kind) {
    case 'reply':
      return { content: [{ type: 'text', text: decision.reply }] };
    case 'soft_error':
      return refused(decision.code, softErrorHint(decision.code, messageMaxChars));
    case 'quota_exceeded':
      return refused('quota_exceeded', quotaHint(decision.quota));
    case 'rate_limited':
      return refused('rate_limited', minuteHint(decision.quota));
    case 'token_budget_exceeded':
      return refused(decision.kind, tokenHint(decision.quota, decision.refusedBy));
    case 'too_many_concurrent':
      return refused(decision.kind, 'Retry in a second, or wait for one of your calls to finish.');
    case 'idempotency_key_invalid':
      return refused(decision.kind, 'Send the call again with a valid key or without one.');
    case 'idempotency_key_in_flight':
      return refused(decision.kind, 'Retry in a second.');
    case 'idempotency_key_reused':
      return refused(decision.kind, 'Use a new Idempotency-Key for a new call.');
    case 'failed':
      return toolError(decision.code);
    case 'client_closed':
    case 'client_closed_after_delivery':
      // Nobody receives this: the client has gone.
      return toolError('internal_error');
    default:
      return decision satisfies never;
  }
}

/** A refusal: the call was not carried out and not counted. */
export function refused(code: ErrorCode, hint: string): CallToolResult {
  return errorResult('Refused', code, `${ERROR_MESSAGES[code]} ${hint}`);
}

/** A technical failure: no internals, only the code and its safe message ("try again later"). */
export function toolError(code: ErrorCode): CallToolResult {
  return errorResult('Failed', code, ERROR_MESSAGES[code]);
}

/** `Refused (code): what and why. Nothing was counted...`, with the code in `_meta` too. */
export function errorResult(
  verb: 'Refused' | 'Failed',
  code: string,
  message: string,
): CallToolResult {
  const text = `${verb} (${code}): ${message.trim()} Nothing was counted against the quota.`;
  return { isError: true, content: [{ type: 'text', text }], _meta: { 'plauder/code': code } };
}

function softErrorHint(code: SoftErrorCode, messageMaxChars: number): string {
  switch (code) {
    case 'plan_inactive':
      return 'Ask the operator of this plauder service to activate the plan.';
    case 'body_invalid':
      return 'The arguments must be an object such as {"message": "Hello"}.';
    case 'message_missing':
    case 'message_invalid':
      return 'Pass the text to send as the string argument "message".';
    case 'message_too_long':
      return `At most ${messageMaxChars} characters are allowed: shorten the message.`;
    case 'session_id_invalid':
      return 'Leave "sessionId" out for a call without memory.';
    default:
      return code satisfies never;
  }
}

function minuteHint(state: QuotaState): string {
  const { minute } = state;
  if (minute === undefined) return 'Retry in a minute.';
  const seconds = Math.max(1, Math.ceil((minute.endMs - state.nowMs) / 1000));
  return (
    `${minute.used} of ${minute.limit} requests are used this minute. ` +
    `Retry in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}, at ${new Date(minute.endMs).toISOString()}.`
  );
}

function quotaHint(state: QuotaState): string {
  const resetsAt = new Date(state.window.endMs).toISOString();
  const hours = Math.max(1, Math.ceil((state.window.endMs - state.nowMs) / 3_600_000));
  return (
    `${state.used} of ${state.limit} requests are used this month. ` +
    `The quota resets at ${resetsAt} (in about ${hours} ${hours === 1 ? 'hour' : 'hours'}).`
  );
}

function tokenHint(state: QuotaState, refusedBy: 'month' | 'minute'): string {
  const budget = refusedBy === 'minute' ? state.tokens?.minute : state.tokens?.monthly;
  const endMs =
    refusedBy === 'minute' ? (state.tokens?.minute?.endMs ?? state.nowMs) : state.window.endMs;
  const seconds = Math.max(1, Math.ceil((endMs - state.nowMs) / 1000));
  const used =
    budget === undefined
      ? ''
      : `${budget.used} of ${budget.limit} tokens are used this ${refusedBy}. `;
  return `${used}Retry in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}, at ${new Date(endMs).toISOString()}, or ask for fewer output tokens.`;
}
