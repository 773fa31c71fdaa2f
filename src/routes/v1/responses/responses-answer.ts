/**
 * @module routes/v1/responses/responses-answer
 * The answers of `/v1/responses` in OpenAI's shapes (docs/contract.md, "Responses API"): a
 * `response` object, and the events of a streamed one, each with its `event:` line and a
 * `sequence_number`. Everything an answer shows comes from the turn's decision (its id,
 * time, reply, tool calls and usage) and the request, so a replayed idempotent outcome and
 * a kept response read back are the answer of the first time.
 *
 * Ids: a response is `resp_` and its turn id's 32 hex digits (random, so unguessable); its
 * message item `msg_` and the same digits, its function calls `fc_`, the digits and the
 * call's index. An item id thus names the response it came from, which is how an
 * `item_reference` finds it.
 */
import type { ReplyOf, TurnStamp } from '../../../chat/take-turn.js';
import type {
  CoreFinish,
  Json,
  JsonObject,
  TokenUsage,
  ToolCall,
} from '../../../core/core-adapter.js';
import type { ErrorCode } from '../../../errors/error-codes.js';
import { ERROR_MESSAGES } from '../../../errors/error-codes.js';
import type { StreamDoor } from '../../turn-stream.js';
import type { ResponseEcho } from './responses-request.js';

const digits = (stamp: TurnStamp) => stamp.turnId.replaceAll('-', '');

export function responseId(stamp: TurnStamp): string {
  return `resp_${digits(stamp)}`;
}

const messageId = (stamp: TurnStamp) => `msg_${digits(stamp)}`;
const callItemId = (stamp: TurnStamp, index: number) => `fc_${digits(stamp)}_${index}`;

/** The response an item id (`msg_…`, `fc_…_N`) came from, or undefined for another id. */
export function responseOfItem(itemId: string): string | undefined {
  const match = /^(?:msg_([0-9a-f]{32})|fc_([0-9a-f]{32})_\d+)$/.exec(itemId);
  const hex = match?.[1] ?? match?.[2];
  return hex === undefined ? undefined : `resp_${hex}`;
}

/** The items of a response's output, found by their ids (for `item_reference`). */
export function outputItems(response: JsonObject): Map<string, JsonObject> {
  const items = new Map<string, JsonObject>();
  const output = response.output;
  if (!Array.isArray(output)) return items;
  for (const item of output as readonly Json[]) {
    if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
      const object = item as JsonObject;
      if (typeof object.id === 'string') items.set(object.id, object);
    }
  }
  return items;
}

/** What a response shows of its turn's answer. */
interface Answer {
  readonly reply: string;
  readonly finish: CoreFinish | undefined;
  readonly usage: TokenUsage;
}

function usageOf(usage: TokenUsage) {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

function messageItem(stamp: TurnStamp, text: string, status: string) {
  return {
    id: messageId(stamp),
    type: 'message',
    status,
    role: 'assistant',
    content: status === 'in_progress' ? [] : [textPart(text)],
  };
}

const textPart = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });

function callItem(stamp: TurnStamp, index: number, call: ToolCall, status: string) {
  return {
    id: callItemId(stamp, index),
    type: 'function_call',
    status,
    arguments: status === 'in_progress' ? '' : call.function.arguments,
    call_id: call.id,
    name: call.function.name,
  };
}

/** The output items, the message first unless a stream sent its calls first. */
function outputOf(stamp: TurnStamp, answer: Answer, textFirst: boolean) {
  const calls = (answer.finish?.toolCalls ?? []).map((call, i) =>
    callItem(stamp, i, call, 'completed'),
  );
  if (answer.reply === '' && calls.length > 0) return calls;
  const message = messageItem(stamp, answer.reply, 'completed');
  return textFirst ? [message, ...calls] : [...calls, message];
}

/** A response object: in progress (no output yet), done with an answer, or failed. */
export function responseObject(
  stamp: TurnStamp,
  model: string,
  echo: ResponseEcho,
  state:
    | { readonly status: 'in_progress' }
    | { readonly status: 'failed'; readonly code: ErrorCode }
    | { readonly status: 'done'; readonly answer: Answer; readonly textFirst?: boolean },
) {
  const reason = state.status === 'done' ? state.answer.finish?.reason : undefined;
  // A reply cut by its length or a filter is incomplete, as OpenAI says it.
  const incomplete =
    reason === 'length'
      ? 'max_output_tokens'
      : reason === 'content_filter'
        ? 'content_filter'
        : undefined;
  const status =
    state.status === 'done'
      ? incomplete === undefined
        ? 'completed'
        : 'incomplete'
      : state.status;
  return {
    id: responseId(stamp),
    object: 'response',
    created_at: Math.floor(stamp.createdAt / 1000),
    status,
    background: false,
    error:
      state.status === 'failed'
        ? { code: 'server_error', message: ERROR_MESSAGES[state.code] }
        : null,
    incomplete_details: incomplete === undefined ? null : { reason: incomplete },
    instructions: echo.instructions,
    max_output_tokens: echo.max_output_tokens,
    metadata: echo.metadata,
    model,
    output: state.status === 'done' ? outputOf(stamp, state.answer, state.textFirst ?? true) : [],
    parallel_tool_calls: echo.parallel_tool_calls,
    previous_response_id: echo.previous_response_id,
    store: echo.store,
    temperature: echo.temperature,
    text: echo.text,
    tool_choice: echo.tool_choice,
    tools: echo.tools,
    top_p: echo.top_p,
    truncation: 'disabled',
    usage: state.status === 'done' ? usageOf(state.answer.usage) : null,
    user: echo.user,
  };
}

/** How a stream ordered its items, for the response kept with its turn. */
export interface StreamOrder {
  textFirst: boolean;
}

/**
 * The events of a streamed response, as OpenAI sends them: `response.created` and
 * `response.in_progress` at once; a message item (`output_item.added`,
 * `content_part.added`) at the first text, each piece as `output_text.delta`; a
 * `function_call` item at each call's first delta, its arguments as
 * `function_call_arguments.delta`; at the end each item's `.done` events and
 * `response.completed` with the whole response and its usage; or `response.failed` when the
 * core failed after the stream began. A kept reply replays as one text delta and its calls.
 */
export function responsesEvents(model: string, echo: ResponseEcho, order: StreamOrder): StreamDoor {
  return (events, stamp) => {
    let sequence = 0;
    const send = (type: string, fields: Record<string, unknown>, opening = false) => {
      const data = JSON.stringify({ type, sequence_number: sequence++, ...fields });
      if (opening) events.open(data, type);
      else events.send(data, type);
    };
    let outputs = 0;
    let text: { index: number; sent: string } | undefined;
    const calls = new Map<number, { index: number; arguments: string }>();

    const delta = (piece: string) => {
      if (piece === '') return;
      if (text === undefined) {
        text = { index: outputs++, sent: '' };
        if (calls.size > 0) order.textFirst = false;
        const item = messageItem(stamp, '', 'in_progress');
        send('response.output_item.added', { output_index: text.index, item });
        send('response.content_part.added', {
          item_id: item.id,
          output_index: text.index,
          content_index: 0,
          part: textPart(''),
        });
      }
      text.sent += piece;
      send('response.output_text.delta', {
        item_id: messageId(stamp),
        output_index: text.index,
        content_index: 0,
        delta: piece,
        logprobs: [],
      });
    };

    const toolCalls = (deltas: readonly JsonObject[]) => {
      for (const d of deltas) {
        const at = typeof d.index === 'number' ? d.index : calls.size;
        const fn = (
          typeof d.function === 'object' && d.function !== null ? d.function : {}
        ) as JsonObject;
        let call = calls.get(at);
        if (call === undefined) {
          call = { index: outputs++, arguments: '' };
          calls.set(at, call);
          const started: ToolCall = {
            id: typeof d.id === 'string' ? d.id : '',
            type: 'function',
            function: { name: typeof fn.name === 'string' ? fn.name : '', arguments: '' },
          };
          send('response.output_item.added', {
            output_index: call.index,
            item: callItem(stamp, at, started, 'in_progress'),
          });
        }
        if (typeof fn.arguments === 'string' && fn.arguments !== '') {
          call.arguments += fn.arguments;
          send('response.function_call_arguments.delta', {
            item_id: callItemId(stamp, at),
            output_index: call.index,
            delta: fn.arguments,
          });
        }
      }
    };

    send(
      'response.created',
      { response: responseObject(stamp, model, echo, { status: 'in_progress' }) },
      true,
    );
    send(
      'response.in_progress',
      { response: responseObject(stamp, model, echo, { status: 'in_progress' }) },
      true,
    );

    return {
      delta,
      toolCalls,
      done: (decision: ReplyOf) => {
        const answer = { reply: decision.reply, finish: decision.finish, usage: decision.usage };
        // A reply the core made without pieces (its fallback for an empty answer) still shows.
        if (text === undefined) delta(answer.reply);
        const finished = (answer.finish?.toolCalls ?? []).map((call, i) => ({ call, i }));
        const ends: { index: number; write: () => void }[] = [];
        if (text !== undefined) {
          const { index } = text;
          ends.push({
            index,
            write: () => {
              const item = messageItem(stamp, answer.reply, 'completed');
              const common = { item_id: item.id, output_index: index, content_index: 0 };
              send('response.output_text.done', { ...common, text: answer.reply, logprobs: [] });
              send('response.content_part.done', { ...common, part: textPart(answer.reply) });
              send('response.output_item.done', { output_index: index, item });
            },
          });
        }
        for (const { call, i } of finished) {
          const index = calls.get(i)?.index;
          if (index === undefined) continue;
          ends.push({
            index,
            write: () => {
              const item = callItem(stamp, i, call, 'completed');
              send('response.function_call_arguments.done', {
                item_id: item.id,
                output_index: index,
                name: call.function.name,
                arguments: call.function.arguments,
              });
              send('response.output_item.done', { output_index: index, item });
            },
          });
        }
        for (const end of ends.sort((a, b) => a.index - b.index)) end.write();
        const response = responseObject(stamp, model, echo, {
          status: 'done',
          answer,
          textFirst: order.textFirst,
        });
        const type =
          response.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
        send(type, { response });
      },
      error: (code: ErrorCode) => {
        send('response.failed', {
          response: responseObject(stamp, model, echo, { status: 'failed', code }),
        });
      },
      replay: ({ reply, finish }: ReplyOf) => {
        delta(reply);
        const kept = finish?.toolCalls;
        if (kept === undefined) return;
        toolCalls(
          kept.map((call, index) => ({
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
