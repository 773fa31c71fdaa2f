/**
 * @module routes/v1/responses/responses-request
 * Reads an OpenAI Responses body (docs/contract.md, "Responses API") into the turn request
 * the use case takes. Pure: no I/O, no exceptions. The body is turned into the Chat
 * Completions body it means (items → messages, function tools → tools, `text.format` →
 * `response_format`, function call outputs → tool messages) and read by the Chat
 * Completions translation (completion-request.ts), so both doors judge a turn alike; a
 * refusal names the Responses parameter (`input[2]`, `text.format`, `max_output_tokens`).
 *
 * Reading takes two steps, because a body may name what plauder keeps (a
 * `previous_response_id`, `item_reference` items): `parseResponsesRequest` reads what the body
 * says, the routes look up what it names, and `turnOf` makes the turn request from both.
 */
import type { ProblemDetail, TurnRequest } from '../../../chat/take-turn.js';
import type { Json, JsonObject, Language, Turn } from '../../../core/core-adapter.js';
import type { SoftErrorCode } from '../../../errors/error-codes.js';
import { parseJsonObject } from '../../request-body.js';
import { MODELS, readCompletionTurn } from '../completion-request.js';

/** What a response object repeats of its request (OpenAI's clients read some of it back). */
export interface ResponseEcho {
  readonly instructions: string | null;
  readonly max_output_tokens: number | null;
  readonly metadata: JsonObject;
  readonly parallel_tool_calls: boolean;
  readonly previous_response_id: string | null;
  readonly store: boolean;
  readonly temperature: number | null;
  readonly text: JsonObject;
  readonly tool_choice: Json;
  readonly tools: readonly Json[];
  readonly top_p: number | null;
  readonly user: string | null;
}

export interface ResponsesRequest {
  /** The model as named by the client (echoed in the answer); `plauder-de` when unreadable. */
  readonly model: string;
  readonly language: Language;
  readonly stream: boolean;
  /** `store` (default true): the response is kept, as a turn of a conversation. */
  readonly store: boolean;
  readonly echo: ResponseEcho;
  /** The body as read, or what it amounts to when it cannot be a turn. */
  readonly body: ReadBody;
}

/** A body that may become a turn once what it names is looked up, or its refusal. */
type ReadBody =
  | {
      readonly ok: true;
      readonly previousResponseId: string | undefined;
      /** The ids of `item_reference` items, to look up among the key's kept responses. */
      readonly references: readonly string[];
      /** The Chat Completions body it means, given the referenced items. */
      readonly completion: (items: ReadonlyMap<string, JsonObject>) => Translated;
    }
  | { readonly ok: false; readonly refusal: TurnRequest };

/** A Chat Completions body and where each of its messages came from (for refusals). */
export interface Translated {
  readonly body: Record<string, unknown> | undefined;
  readonly refusal?: TurnRequest;
  /** The Responses parameter each message was made from (`input[3]`, `instructions`). */
  readonly sources: readonly string[];
}

/** What the routes found for the turn: its conversation, and how it is stored. */
export interface TurnContext {
  readonly sessionHeader: string | string[] | undefined;
  /** The session to continue and store the turn in (a kept conversation, or a new one). */
  readonly sessionId?: string;
  /** Turns of a continued conversation that is read but not stored to (`store: false`). */
  readonly history?: readonly Turn[];
  readonly messageMaxChars: number;
}

/** `/v1/responses`' own code for a `previous_response_id` it does not keep, as OpenAI's. */
export const PREVIOUS_NOT_FOUND = 'previous_response_not_found';
/** An `item_reference` to no kept item of the key. */
export const ITEM_NOT_FOUND = 'item_not_found';

type Body = Record<string, unknown>;

class Refusal {
  constructor(
    readonly code: SoftErrorCode,
    readonly detail: ProblemDetail,
  ) {}
}

const refuse = (code: SoftErrorCode, param: string | null, message: string, own?: string) =>
  new Refusal(code, { param, message, ...(own === undefined ? {} : { code: own }) });

const refusalOf = (error: Refusal): TurnRequest => ({
  ok: false,
  code: error.code,
  detail: error.detail,
});

/** The first step: what the body says (see the module comment). */
export function parseResponsesRequest(
  contentType: string | undefined,
  raw: unknown,
): ResponsesRequest {
  const object = parseJsonObject(contentType, raw);
  const model = typeof object?.model === 'string' ? object.model : 'plauder-de';
  const language = MODELS[model] ?? 'de';
  const stream = object?.stream === true;
  const store = object?.store !== false;
  const echo = echoOf(object ?? {}, store);
  const request = (body: ReadBody): ResponsesRequest => ({
    model,
    language,
    stream,
    store,
    echo,
    body,
  });
  try {
    if (object === undefined) {
      throw refuse(
        'body_invalid',
        null,
        'The body must be a JSON object sent as application/json.',
      );
    }
    return request(readBody(object));
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return request({ ok: false, refusal: refusalOf(error) });
  }
}

/** The second step: the turn request, from the body and what the routes found. */
export function turnOf(
  translated: Translated,
  language: Language,
  context: TurnContext,
): TurnRequest {
  if (translated.refusal !== undefined) return translated.refusal;
  if (translated.body === undefined) throw new Error('a translation without a body');
  const { sessionId, history } = context;
  // With X-Session-Id the stored session is the history, as on /v1/chat/completions.
  const header = sessionId === undefined ? context.sessionHeader : undefined;
  const read = readCompletionTurn(
    translated.body,
    language,
    header,
    context.messageMaxChars,
    sessionId !== undefined,
  );
  if (!read.ok) return { ...read, ...renamed(read.detail, translated.sources) };
  const turn =
    read.gatewayOnly === undefined
      ? read
      : { ...read, gatewayOnly: renamed(read.gatewayOnly, translated.sources).detail };
  if (sessionId !== undefined) return { ...turn, sessionId };
  if (history === undefined || history.length === 0) return turn;
  return { ...turn, history: [...history, ...(turn.history ?? [])] };
}

function readBody(body: Body): ReadBody {
  refuseUnsupported(body);
  const previous = body.previous_response_id;
  if (previous !== undefined && previous !== null && typeof previous !== 'string') {
    throw refuse('body_invalid', 'previous_response_id', 'previous_response_id must be a string.');
  }
  const chat: Body = { model: body.model };
  copySampling(body, chat);
  readTools(body, chat);
  readFormat(body.text, chat);
  const references = referencesOf(body.input);
  return {
    ok: true,
    previousResponseId: typeof previous === 'string' ? previous : undefined,
    references,
    completion: (items) => {
      try {
        const { messages, sources } = messagesOf(body.instructions, body.input, items);
        return { body: { ...chat, messages }, sources };
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        return { body: undefined, refusal: refusalOf(error), sources: [] };
      }
    },
  };
}

/** What plauder does not offer on any core: refused by name rather than ignored. */
function refuseUnsupported(body: Body): void {
  if (body.background === true) {
    throw refuse(
      'body_invalid',
      'background',
      'background responses are not supported by plauder: leave background out or false.',
    );
  }
  if (body.conversation !== undefined && body.conversation !== null) {
    throw refuse(
      'body_invalid',
      'conversation',
      'conversation is not supported by plauder: continue a response with previous_response_id.',
    );
  }
  if (body.prompt !== undefined && body.prompt !== null) {
    throw refuse('body_invalid', 'prompt', 'Prompt templates are not supported by plauder.');
  }
  for (const name of ['store', 'stream', 'parallel_tool_calls'] as const) {
    const value = body[name];
    if (value !== undefined && value !== null && typeof value !== 'boolean') {
      throw refuse('body_invalid', name, `${name} must be a boolean.`);
    }
  }
  const metadata = body.metadata;
  if (metadata !== undefined && metadata !== null && !isObject(metadata)) {
    throw refuse('body_invalid', 'metadata', 'metadata must be an object of strings.');
  }
}

/** Sampling parameters under their Chat Completions names (the Chat reader checks them). */
function copySampling(body: Body, chat: Body): void {
  const renamed: Record<string, string> = {
    max_output_tokens: 'max_completion_tokens',
    temperature: 'temperature',
    top_p: 'top_p',
    user: 'user',
    stream: 'stream',
    parallel_tool_calls: 'parallel_tool_calls',
  };
  for (const [from, to] of Object.entries(renamed)) {
    if (body[from] !== undefined && body[from] !== null) chat[to] = body[from];
  }
}

/** Hosted tools OpenAI runs itself; plauder runs no tools, it only passes function tools on. */
function readTools(body: Body, chat: Body): void {
  const tools = body.tools;
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) throw refuse('body_invalid', 'tools', 'tools must be an array.');
    chat.tools = tools.map((tool, i) => {
      const at = `tools[${i}]`;
      if (!isObject(tool)) throw refuse('body_invalid', at, `${at} must be an object.`);
      if (tool.type !== 'function') {
        const type = typeof tool.type === 'string' ? tool.type.slice(0, 40) : 'missing';
        throw refuse(
          'body_invalid',
          `${at}.type`,
          `Tools of type ${type} are not supported by plauder: only function tools, which the client runs.`,
        );
      }
      if (typeof tool.name !== 'string' || tool.name === '') {
        throw refuse('body_invalid', `${at}.name`, `${at}.name must be a non-empty string.`);
      }
      const fn: Body = { name: tool.name };
      for (const name of ['description', 'parameters', 'strict'] as const) {
        if (tool[name] !== undefined && tool[name] !== null) fn[name] = tool[name];
      }
      return { type: 'function', function: fn };
    });
    // Agents send an empty list when they have no tools: it asks for nothing.
    if (tools.length === 0) delete chat.tools;
  }
  const choice = body.tool_choice;
  if (choice === undefined || choice === null) return;
  if (typeof choice === 'string') {
    chat.tool_choice = choice;
    return;
  }
  if (isObject(choice) && choice.type === 'function' && typeof choice.name === 'string') {
    chat.tool_choice = { type: 'function', function: { name: choice.name } };
    return;
  }
  throw refuse(
    'body_invalid',
    'tool_choice',
    'tool_choice must be "none", "auto", "required" or {"type": "function", "name": string}.',
  );
}

function readFormat(text: unknown, chat: Body): void {
  if (text === undefined || text === null) return;
  if (!isObject(text)) throw refuse('body_invalid', 'text', 'text must be an object.');
  const format = text.format;
  if (format === undefined || format === null) return;
  const type = isObject(format) ? format.type : undefined;
  if (!isObject(format) || (type !== 'text' && type !== 'json_object' && type !== 'json_schema')) {
    throw refuse(
      'body_invalid',
      'text.format',
      'text.format must be {"type": "text" | "json_object" | "json_schema"}.',
    );
  }
  if (type !== 'json_schema') {
    chat.response_format = { type };
    return;
  }
  if (typeof format.name !== 'string' || !isObject(format.schema)) {
    throw refuse(
      'body_invalid',
      'text.format',
      'text.format of type json_schema needs a name and a schema object.',
    );
  }
  const schema: Body = { name: format.name, schema: format.schema };
  if (typeof format.strict === 'boolean') schema.strict = format.strict;
  if (typeof format.description === 'string') schema.description = format.description;
  chat.response_format = { type: 'json_schema', json_schema: schema };
}

function referencesOf(input: unknown): string[] {
  if (!Array.isArray(input)) return [];
  return input.flatMap((item) =>
    isObject(item) && item.type === 'item_reference' && typeof item.id === 'string'
      ? [item.id]
      : [],
  );
}

/**
 * The Chat Completions messages an input means: the instructions first (a system message),
 * then one message per message item; function calls join the assistant message before them
 * (or make one), function call outputs are tool messages, reasoning items are left out.
 */
function messagesOf(
  instructions: unknown,
  input: unknown,
  items: ReadonlyMap<string, JsonObject>,
): { messages: Body[]; sources: string[] } {
  const messages: Body[] = [];
  const sources: string[] = [];
  const push = (message: Body, source: string) => {
    messages.push(message);
    sources.push(source);
  };
  if (instructions !== undefined && instructions !== null) {
    if (typeof instructions !== 'string') {
      throw refuse('body_invalid', 'instructions', 'instructions must be a string.');
    }
    if (instructions.trim() !== '') push({ role: 'system', content: instructions }, 'instructions');
  }
  if (input === undefined || input === null) {
    throw refuse('message_missing', 'input', 'You must provide an input parameter.');
  }
  if (typeof input === 'string') {
    push({ role: 'user', content: input }, 'input');
    return { messages, sources };
  }
  if (!Array.isArray(input)) {
    throw refuse('message_invalid', 'input', 'input must be a string or an array of items.');
  }
  input.forEach((sent, i) => {
    const at = `input[${i}]`;
    const item = resolved(sent, at, items);
    const type = item.type ?? (item.role === undefined ? undefined : 'message');
    switch (type) {
      case 'message':
        push(messageOf(item, at), at);
        break;
      case 'function_call': {
        const call = toolCallOf(item, at);
        const last = messages.at(-1);
        if (last?.role === 'assistant') {
          last.tool_calls = [...((last.tool_calls as unknown[] | undefined) ?? []), call];
        } else {
          push({ role: 'assistant', content: null, tool_calls: [call] }, at);
        }
        break;
      }
      case 'function_call_output':
        push(toolMessageOf(item, at), at);
        break;
      case 'reasoning':
        break;
      default: {
        const named =
          typeof type === 'string' ? `Items of type ${type.slice(0, 40)} are` : 'This item is';
        throw refuse(
          'message_invalid',
          `${at}.type`,
          `${named} not supported by plauder: use message, function_call, function_call_output or item_reference items.`,
        );
      }
    }
  });
  return { messages, sources };
}

/** The item itself, or the kept item an `item_reference` names. */
function resolved(item: unknown, at: string, items: ReadonlyMap<string, JsonObject>): Body {
  if (!isObject(item)) throw refuse('message_invalid', at, `${at} must be an object.`);
  if (item.type !== 'item_reference') return item;
  const found = typeof item.id === 'string' ? items.get(item.id) : undefined;
  if (found === undefined) {
    throw refuse(
      'body_invalid',
      `${at}.id`,
      'No kept item with that id: it belongs to no stored response of this key.',
      ITEM_NOT_FOUND,
    );
  }
  return found as Body;
}

const MESSAGE_ROLES = new Set(['user', 'assistant', 'system', 'developer']);

function messageOf(item: Body, at: string): Body {
  const role = item.role;
  if (typeof role !== 'string' || !MESSAGE_ROLES.has(role)) {
    throw refuse(
      'message_invalid',
      `${at}.role`,
      `${at}.role must be user, assistant, system or developer.`,
    );
  }
  const content = item.content;
  if (typeof content === 'string') return { role, content };
  if (!Array.isArray(content)) {
    throw refuse('message_invalid', `${at}.content`, `${at}.content must be a string or an array.`);
  }
  return { role, content: content.map((part, j) => partOf(part, `${at}.content[${j}]`)) };
}

function partOf(part: unknown, at: string): Body {
  if (!isObject(part)) throw refuse('message_invalid', at, `${at} must be an object.`);
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'refusal', refusal: part.refusal };
    case 'input_image':
      if (typeof part.image_url !== 'string') {
        throw refuse(
          'message_invalid',
          `${at}.image_url`,
          'Images must be given as image_url (a URL or a data URL): file ids are not supported.',
        );
      }
      return {
        type: 'image_url',
        image_url:
          typeof part.detail === 'string'
            ? { url: part.image_url, detail: part.detail }
            : { url: part.image_url },
      };
    default: {
      const type = typeof part.type === 'string' ? part.type.slice(0, 40) : 'missing';
      throw refuse(
        'message_invalid',
        `${at}.type`,
        `Content of type ${type} is not supported by plauder: use input_text, output_text or input_image.`,
      );
    }
  }
}

function toolCallOf(item: Body, at: string): Body {
  for (const name of ['call_id', 'name', 'arguments'] as const) {
    if (typeof item[name] !== 'string') {
      throw refuse('message_invalid', `${at}.${name}`, `${at}.${name} must be a string.`);
    }
  }
  return {
    id: item.call_id,
    type: 'function',
    function: { name: item.name, arguments: item.arguments },
  };
}

function toolMessageOf(item: Body, at: string): Body {
  if (typeof item.call_id !== 'string' || item.call_id === '') {
    throw refuse('message_invalid', `${at}.call_id`, `${at}.call_id must be a string.`);
  }
  const output = item.output;
  let content: string;
  if (typeof output === 'string') content = output;
  else if (
    Array.isArray(output) &&
    output.every((p) => isObject(p) && typeof p.text === 'string')
  ) {
    content = output.map((p) => (p as Body).text).join('\n');
  } else {
    throw refuse(
      'message_invalid',
      `${at}.output`,
      `${at}.output must be a string or an array of input_text parts.`,
    );
  }
  return { role: 'tool', tool_call_id: item.call_id, content };
}

/** The Chat Completions names of a refusal as the Responses parameters they came from. */
function renamed<D extends ProblemDetail | undefined>(
  detail: D,
  sources: readonly string[],
): { detail: D } {
  if (detail === undefined) return { detail };
  const rename = (text: string) =>
    text
      .replace(/messages\[(\d+)\]/g, (whole, i: string) => sources[Number(i)] ?? whole)
      .replace(/^messages\b/, 'input')
      .replace(/\bresponse_format\b/g, 'text.format')
      .replace(/\bmax_completion_tokens\b/g, 'max_output_tokens');
  const param = detail.param === null ? null : rename(detail.param);
  return { detail: { ...detail, param, message: rename(detail.message) } };
}

function echoOf(body: Body, store: boolean): ResponseEcho {
  const number = (value: unknown) => (typeof value === 'number' ? value : null);
  const text = isObject(body.text) && isObject(body.text.format) ? body.text : undefined;
  return {
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: number(body.max_output_tokens),
    metadata: isObject(body.metadata) ? (body.metadata as JsonObject) : {},
    parallel_tool_calls: body.parallel_tool_calls !== false,
    previous_response_id:
      typeof body.previous_response_id === 'string' ? body.previous_response_id : null,
    store,
    temperature: number(body.temperature),
    text: (text as JsonObject | undefined) ?? { format: { type: 'text' } },
    tool_choice: (body.tool_choice as Json | undefined) ?? 'auto',
    tools: Array.isArray(body.tools) ? (body.tools as Json[]) : [],
    top_p: number(body.top_p),
    user: typeof body.user === 'string' ? body.user : null,
  };
}

function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
