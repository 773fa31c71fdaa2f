/**
 * @module routes/v1/completion-request
 * Reads an OpenAI Chat Completions body (docs/contract.md, "OpenAI-compatible door") into a turn request. Pure: no I/O, no
 * exceptions. A body the turn cannot take becomes a failed `TurnRequest` whose detail names
 * the parameter, as OpenAI's 400s do; the use case decides when it is answered (after the
 * key, the plan and the limits), exactly like the soft errors of `/api/chat`.
 *
 * The last message is the turn's message (a user message); earlier user and assistant
 * messages are the history, system and developer messages the client's instructions.
 */
import type { ProblemDetail, TurnRequest } from '../../chat/take-turn.js';
import type {
  GatewayParameter,
  GatewayParameters,
  Json as JsonValue,
  Language,
  Sampling,
  Turn,
  WireMessage,
} from '../../core/core-adapter.js';
import type { SoftErrorCode } from '../../errors/error-codes.js';
import { SESSION_ID_PATTERN } from '../../sessions/session-service.js';
import { hasMoreCodePointsThan } from '../../util/code-points.js';
import { nestedDeeperThan } from '../../util/json-depth.js';
import { parseJsonObject } from '../request-body.js';

export const MODELS: Readonly<Record<string, Language>> = Object.freeze({
  'plauder-de': 'de',
  'plauder-en': 'en',
});

export interface CompletionRequest {
  /** The model as named by the client (echoed in the answer); `plauder-de` when unreadable. */
  readonly model: string;
  readonly language: Language;
  readonly stream: boolean;
  /** `stream_options.include_usage`: a last chunk with the token counts. */
  readonly includeUsage: boolean;
  readonly turn: TurnRequest;
}

type Json = Record<string, unknown>;

class Refusal {
  constructor(
    readonly code: SoftErrorCode,
    readonly detail: ProblemDetail,
  ) {}
}

const refuse = (code: SoftErrorCode, param: string | null, message: string, own?: string) =>
  new Refusal(code, { param, message, ...(own === undefined ? {} : { code: own }) });

export function parseCompletionRequest(
  contentType: string | undefined,
  body: unknown,
  sessionHeader: string | string[] | undefined,
  messageMaxChars: number,
): CompletionRequest {
  const object = parseJsonObject(contentType, body);
  const model = typeof object?.model === 'string' ? object.model : 'plauder-de';
  const language = MODELS[model] ?? 'de';
  const stream = object?.stream === true;
  const includeUsage =
    stream && isObject(object?.stream_options)
      ? object.stream_options.include_usage === true
      : false;
  const request = (turn: TurnRequest): CompletionRequest => ({
    model,
    language,
    stream,
    includeUsage,
    turn,
  });
  try {
    if (object === undefined) {
      throw refuse(
        'body_invalid',
        null,
        'The body must be a JSON object sent as application/json.',
      );
    }
    return request(readTurn(object, language, sessionHeader, messageMaxChars));
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return request({ ok: false, code: error.code, detail: error.detail });
  }
}

/**
 * A Chat Completions body, already read as an object, as a turn request: what another door
 * that speaks in messages (Responses) gives once it has turned its items into them.
 */
export function readCompletionTurn(
  body: Json,
  language: Language,
  sessionHeader: string | string[] | undefined,
  messageMaxChars: number,
  /** True when a stored conversation supplies the history (Responses' previous_response_id). */
  storedHistory = false,
): TurnRequest {
  try {
    return readTurn(body, language, sessionHeader, messageMaxChars, storedHistory);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return { ok: false, code: error.code, detail: error.detail };
  }
}

function readTurn(
  body: Json,
  language: Language,
  sessionHeader: string | string[] | undefined,
  messageMaxChars: number,
  storedHistory = false,
): TurnRequest {
  readModel(body.model);
  refuseUnsupported(body);
  refuseTooDeep(body);
  const sampling = readSampling(body);
  const { gateway, needs: parameterNeeds } = readGateway(body);
  const { message, history, instructions, input, needs } = readMessages(
    body.messages,
    messageMaxChars,
    language,
  );
  const sessionId = readSessionHeader(sessionHeader);
  // Leading tool messages may answer calls of a stored history (X-Session-Id, a previous response).
  refuseUnansweredTools(body.messages as readonly Json[], sessionId !== undefined || storedHistory);
  const gatewayOnly = parameterNeeds ?? needs;
  return {
    ok: true,
    message,
    sessionId,
    // With X-Session-Id the stored session is the history (docs/contract.md,
    // "OpenAI-compatible door").
    history: sessionId === undefined ? history : undefined,
    instructions: instructions.length > 0 ? instructions : undefined,
    sampling: Object.keys(sampling).length > 0 ? sampling : undefined,
    ...(input === undefined ? {} : { input }),
    ...(Object.keys(gateway).length > 0 ? { gateway } : {}),
    ...(gatewayOnly === undefined ? {} : { gatewayOnly }),
  };
}

function readModel(model: unknown): void {
  if (model === undefined || model === null) {
    throw refuse('body_invalid', 'model', 'You must provide a model parameter.');
  }
  if (typeof model !== 'string') throw refuse('body_invalid', 'model', 'model must be a string.');
  if (MODELS[model] === undefined) {
    const known = Object.keys(MODELS).join(', ');
    const message = `The model \`${model.slice(0, 100)}\` does not exist. Use one of: ${known}.`;
    throw refuse('body_invalid', 'model', message, 'model_not_found');
  }
}

/** Parameters plauder does not offer on any core: refused by name rather than ignored. */
function refuseUnsupported(body: Json): void {
  if (body.n !== undefined && body.n !== null && body.n !== 1) {
    throw refuse('body_invalid', 'n', 'Only n=1 is supported: plauder makes one reply per turn.');
  }
  for (const name of ['functions', 'function_call'] as const) {
    if (body[name] !== undefined && body[name] !== null) {
      throw refuse('body_invalid', name, `${name} is deprecated and not supported: use tools.`);
    }
  }
  if (body.audio !== undefined && body.audio !== null) {
    throw refuse('body_invalid', 'audio', 'Audio output is not supported by plauder.');
  }
  const modalities = body.modalities;
  if (Array.isArray(modalities) && modalities.some((m) => m !== 'text')) {
    throw refuse('body_invalid', 'modalities', 'Only the text modality is supported.');
  }
}

/** How deeply a passed-through part may nest: far beyond any tool schema or message. */
const MAX_DEPTH = 64;

/** Parts that go to the upstream as they are must be encodable again: bounded nesting. */
function refuseTooDeep(body: Json): void {
  for (const name of ['response_format', 'tools', 'tool_choice'] as const) {
    if (nestedDeeperThan(body[name], MAX_DEPTH)) {
      throw refuse('body_invalid', name, `${name} nests deeper than ${MAX_DEPTH} levels.`);
    }
  }
  const messages = body.messages;
  if (!Array.isArray(messages)) return;
  messages.forEach((message, i) => {
    if (nestedDeeperThan(message, MAX_DEPTH)) {
      const at = `messages[${i}]`;
      throw refuse('message_invalid', at, `${at} nests deeper than ${MAX_DEPTH} levels.`);
    }
  });
}

/**
 * The parameters passed through to a gateway core (docs/contract.md, "OpenAI-compatible
 * door"), checked for their shape only; the upstream judges the rest. The first one set
 * names the refusal of a core that cannot honour them. `response_format: {type: "text"}`
 * asks for what every core does, so it needs no gateway.
 */
function readGateway(body: Json): { gateway: GatewayParameters; needs?: ProblemDetail } {
  const gateway: { -readonly [K in GatewayParameter]?: JsonValue } = {};
  let needs: ProblemDetail | undefined;
  const need = (param: string, message: string) => {
    needs ??= { param, message };
  };
  const format = body.response_format;
  if (format !== undefined && format !== null) {
    const type = isObject(format) ? format.type : undefined;
    if (type !== 'text' && type !== 'json_object' && type !== 'json_schema') {
      throw refuse(
        'body_invalid',
        'response_format',
        'response_format must be {"type": "text" | "json_object" | "json_schema"}.',
      );
    }
    const schema = isObject(format) ? format.json_schema : undefined;
    if (type === 'json_schema' && !(isObject(schema) && typeof schema.name === 'string')) {
      throw refuse(
        'body_invalid',
        'response_format.json_schema',
        'response_format of type json_schema needs a json_schema object with a name.',
      );
    }
    gateway.response_format = format as JsonValue;
    if (type !== 'text') need('response_format', 'response_format is not supported');
  }
  const tools = body.tools;
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools) || !tools.every(isFunctionTool)) {
      throw refuse(
        'body_invalid',
        'tools',
        'tools must be an array of {"type": "function", "function": {"name": string, ...}}.',
      );
    }
    if (tools.length === 0) {
      throw refuse('body_invalid', 'tools', 'tools must not be empty: leave it out instead.');
    }
    gateway.tools = tools as JsonValue;
    need('tools', 'tools are not supported');
  }
  const choice = body.tool_choice;
  if (choice !== undefined && choice !== null) {
    const named = isObject(choice) && isObject(choice.function) ? choice.function.name : undefined;
    const known = typeof choice === 'string' && ['none', 'auto', 'required'].includes(choice);
    if (!known && !(isObject(choice) && typeof named === 'string')) {
      throw refuse(
        'body_invalid',
        'tool_choice',
        'tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name": string}}.',
      );
    }
    gateway.tool_choice = choice as JsonValue;
    need('tool_choice', 'tool_choice is not supported');
  }
  const parallel = body.parallel_tool_calls;
  if (parallel !== undefined && parallel !== null) {
    if (typeof parallel !== 'boolean') {
      throw refuse('body_invalid', 'parallel_tool_calls', 'parallel_tool_calls must be a boolean.');
    }
    gateway.parallel_tool_calls = parallel;
    need('parallel_tool_calls', 'parallel_tool_calls is not supported');
  }
  return needs === undefined ? { gateway } : { gateway, needs };
}

function readSampling(body: Json): Sampling {
  const number = (name: string, min: number, max: number, integer: boolean) => {
    const value = body[name];
    if (value === undefined || value === null) return undefined;
    const ok =
      typeof value === 'number' &&
      Number.isFinite(value) &&
      value >= min &&
      value <= max &&
      (!integer || Number.isInteger(value));
    if (!ok) {
      const kind = integer ? 'an integer' : 'a number';
      throw refuse('body_invalid', name, `${name} must be ${kind} from ${min} to ${max}.`);
    }
    return value;
  };
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw refuse('body_invalid', 'stream', 'stream must be a boolean.');
  }
  const options = body.stream_options;
  if (options !== undefined && options !== null) {
    if (!isObject(options) || !['undefined', 'boolean'].includes(typeof options.include_usage)) {
      throw refuse(
        'body_invalid',
        'stream_options',
        'stream_options must be {"include_usage": boolean}.',
      );
    }
  }
  const maxTokens =
    number('max_completion_tokens', 1, 1_000_000, true) ?? number('max_tokens', 1, 1_000_000, true);
  const temperature = number('temperature', 0, 2, false);
  const topP = number('top_p', 0, 1, false);
  const stop = readStop(body.stop);
  const user = body.user;
  if (user !== undefined && user !== null && typeof user !== 'string') {
    throw refuse('body_invalid', 'user', 'user must be a string.');
  }
  const sampling: { -readonly [K in keyof Sampling]: Sampling[K] } = {};
  if (maxTokens !== undefined) sampling.maxTokens = maxTokens;
  if (temperature !== undefined) sampling.temperature = temperature;
  if (topP !== undefined) sampling.topP = topP;
  if (stop !== undefined) sampling.stop = stop;
  if (typeof user === 'string' && user !== '') sampling.user = user;
  return sampling;
}

function readStop(stop: unknown): readonly string[] | undefined {
  if (stop === undefined || stop === null) return undefined;
  if (typeof stop === 'string') return [stop];
  if (
    Array.isArray(stop) &&
    stop.length <= 4 &&
    stop.every((s): s is string => typeof s === 'string')
  ) {
    return stop.length === 0 ? undefined : stop;
  }
  throw refuse('body_invalid', 'stop', 'stop must be a string or an array of up to 4 strings.');
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** One message as read: its role, its text, and what only a gateway core can take. */
interface ReadMessage {
  readonly role: string;
  readonly text: string;
  /** The message as the client sent it, for a gateway core. */
  readonly wire: WireMessage;
  /** Tool calls, tool results or image parts: the first one, named. */
  readonly needs: ProblemDetail | undefined;
}

interface Conversation {
  readonly message: string;
  readonly history: Turn[];
  readonly instructions: string[];
  /** The turn's input as messages, when it is more than one user text. */
  readonly input?: readonly WireMessage[];
  readonly needs?: ProblemDetail;
}

/**
 * The last messages after the last assistant message are the turn's input: a user message,
 * or in an agent loop the tool results (and any user message after them). Earlier messages
 * are the history, turn by turn: what led to each assistant message, then that message.
 */
function readMessages(
  messages: unknown,
  messageMaxChars: number,
  language: Language,
): Conversation {
  if (messages === undefined || messages === null) {
    throw refuse('message_missing', 'messages', 'You must provide a messages parameter.');
  }
  if (!Array.isArray(messages))
    throw refuse('message_invalid', 'messages', 'messages must be an array.');
  if (messages.length === 0) {
    throw refuse('message_missing', 'messages', 'messages must contain at least one message.');
  }
  const read = messages.map((message, i) => readMessage(message, `messages[${i}]`));
  const instructions = read
    .filter((m) => m.role === 'system' || m.role === 'developer')
    .map((m) => m.text)
    .filter((text) => text.trim() !== '');
  const talk = read.filter((m) => m.role !== 'system' && m.role !== 'developer');
  const last = talk.at(-1);
  if (last === undefined || (last.role !== 'user' && last.role !== 'tool')) {
    throw refuse(
      'message_missing',
      'messages',
      'The last message must be a user message (or tool results).',
    );
  }
  let start = talk.length;
  while (start > 0 && talk[start - 1]?.role !== 'assistant') start--;
  const trailing = talk.slice(start);
  const at = `messages[${read.length - 1}].content`;
  const needs = talk.find((m) => m.needs !== undefined)?.needs;
  const plain = trailing.every((m) => m.needs === undefined);
  // A plain turn is its last user message; earlier ones of the run are history.
  const input = plain ? [last] : trailing;
  const userText = input
    .filter((m) => m.role === 'user')
    .map((m) => m.text)
    .join('\n');
  const message = input.map((m) => m.text).join('\n');
  if (message.trim() === '' && plain) {
    throw refuse('message_missing', at, 'The last user message is empty.');
  }
  if (hasMoreCodePointsThan(userText, messageMaxChars)) {
    throw refuse(
      'message_too_long',
      at,
      `The last user message is longer than ${messageMaxChars} characters.`,
    );
  }
  const history = historyOf(plain ? talk.slice(0, -1) : talk.slice(0, start), language);
  const conversation: Conversation = { message, history, instructions };
  return plain
    ? { ...conversation, ...(needs ? { needs } : {}) }
    : { ...conversation, input: trailing.map((m) => m.wire), needs: needs ?? trailing[0]?.needs };
}

/**
 * Earlier messages as turns, one per assistant message. A run of plain text makes text
 * turns (a user message left unanswered is a turn with an empty reply); a turn with tool
 * calls, tool results or images keeps its messages as they were sent.
 */
function historyOf(messages: readonly ReadMessage[], language: Language): Turn[] {
  const history: Turn[] = [];
  let run: ReadMessage[] = [];
  const close = (answer: ReadMessage | undefined) => {
    const group = answer ? [...run, answer] : run;
    run = [];
    if (group.some((m) => m.needs !== undefined)) {
      const message = group
        .filter((m) => m.role !== 'assistant')
        .map((m) => m.text)
        .join('\n');
      const reply = answer?.text ?? '';
      history.push({ message, reply, language, wire: group.map((m) => m.wire) });
      return;
    }
    let open: string | undefined;
    for (const m of group) {
      if (m.role === 'assistant') {
        history.push({ message: open ?? '', reply: m.text, language });
        open = undefined;
      } else {
        if (open !== undefined) history.push({ message: open, reply: '', language });
        open = m.text;
      }
    }
    if (open !== undefined) history.push({ message: open, reply: '', language });
  };
  for (const m of messages) {
    if (m.role === 'assistant') close(m);
    else run.push(m);
  }
  if (run.length > 0) close(undefined);
  return history.filter((turn) => turn.message !== '' || turn.reply !== '' || turn.wire);
}

/**
 * A `tool` message must answer a call of the assistant message before it (only other tool
 * messages between them), as OpenAI requires: an upstream refuses the request otherwise,
 * which would be a 500 after the turn was reserved, so it is refused here by name, on every
 * core. With `X-Session-Id`, tool messages before the body's first assistant message may
 * answer the calls of the stored session's last turn (docs/openai.md, "Memory"): the body
 * cannot show those calls. Runs on messages `readMessages` has checked.
 */
function refuseUnansweredTools(messages: readonly Json[], session: boolean): void {
  /** The ids a tool message may answer now; undefined before any user or assistant message. */
  let calls: ReadonlySet<unknown> | undefined;
  messages.forEach((message, i) => {
    if (message.role === 'system' || message.role === 'developer') return;
    if (message.role === 'assistant') {
      const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as Json[]) : [];
      calls = new Set(toolCalls.map((call) => call.id));
      return;
    }
    if (message.role !== 'tool') {
      // A user message: no tool message may follow until the next assistant message.
      calls = new Set();
      return;
    }
    if (calls === undefined ? session : calls.has(message.tool_call_id)) return;
    const at = `messages[${i}]`;
    throw refuse(
      'message_invalid',
      at,
      `${at} answers no tool call: a tool message must follow the assistant message whose tool_calls hold its tool_call_id.`,
    );
  });
}

function readMessage(message: unknown, at: string): ReadMessage {
  if (!isObject(message)) throw refuse('message_invalid', at, `${at} must be an object.`);
  const role = message.role;
  if (typeof role !== 'string' || !ROLES.has(role)) {
    const what = typeof role === 'string' ? `'${role.slice(0, 40)}' messages are` : 'role is';
    throw refuse(
      'message_invalid',
      `${at}.role`,
      `${what} not supported: use system, developer, user, assistant or tool.`,
    );
  }
  const wire = message as WireMessage;
  let needs: ProblemDetail | undefined;
  const toolCalls = message.tool_calls;
  if (toolCalls !== undefined && toolCalls !== null) {
    if (role !== 'assistant' || !Array.isArray(toolCalls) || !toolCalls.every(isToolCall)) {
      throw refuse(
        'message_invalid',
        `${at}.tool_calls`,
        `${at}.tool_calls must be an array of {id, type: "function", function: {name, arguments}} on an assistant message.`,
      );
    }
    if (toolCalls.length > 0)
      needs = { param: `${at}.tool_calls`, message: 'Tool calls are not supported' };
  }
  if (role === 'tool') {
    if (typeof message.tool_call_id !== 'string' || message.tool_call_id === '') {
      throw refuse('message_invalid', `${at}.tool_call_id`, `${at}.tool_call_id must be a string.`);
    }
    needs = { param: at, message: 'Tool messages are not supported' };
  }
  const content = readContent(message.content, role, `${at}.content`);
  return { role, text: content.text, wire, needs: needs ?? content.needs };
}

function isFunctionTool(tool: unknown): boolean {
  return (
    isObject(tool) &&
    tool.type === 'function' &&
    isObject(tool.function) &&
    typeof tool.function.name === 'string' &&
    tool.function.name !== ''
  );
}

function isToolCall(call: unknown): boolean {
  return (
    isObject(call) &&
    typeof call.id === 'string' &&
    (call.type === undefined || call.type === 'function') &&
    isObject(call.function) &&
    typeof call.function.name === 'string' &&
    typeof call.function.arguments === 'string'
  );
}

function readContent(
  content: unknown,
  role: string,
  at: string,
): { text: string; needs?: ProblemDetail } {
  if (typeof content === 'string') return { text: content };
  if ((content === null || content === undefined) && role === 'assistant') return { text: '' };
  if (!Array.isArray(content)) {
    throw refuse('message_invalid', at, `${at} must be a string or an array of content parts.`);
  }
  const texts: string[] = [];
  let needs: ProblemDetail | undefined;
  content.forEach((part, j) => {
    const read = readPart(part, `${at}[${j}]`, role);
    if (read.text !== undefined) texts.push(read.text);
    needs ??= read.needs;
  });
  return { text: texts.join('\n'), ...(needs ? { needs } : {}) };
}

const UNSUPPORTED_PARTS: Readonly<Record<string, string>> = {
  input_audio: 'Audio parts are not supported by plauder.',
  file: 'File parts are not supported by plauder.',
};

function readPart(
  part: unknown,
  at: string,
  role: string,
): { text?: string; needs?: ProblemDetail } {
  if (!isObject(part)) throw refuse('message_invalid', at, `${at} must be an object.`);
  const type = part.type;
  if (type === 'text') {
    if (typeof part.text !== 'string') {
      throw refuse('message_invalid', `${at}.text`, `${at}.text must be a string.`);
    }
    return { text: part.text };
  }
  if (type === 'refusal' && role === 'assistant') {
    if (typeof part.refusal !== 'string') {
      throw refuse('message_invalid', `${at}.refusal`, `${at}.refusal must be a string.`);
    }
    return { text: part.refusal };
  }
  if (type === 'image_url' && role === 'user') {
    if (!isObject(part.image_url) || typeof part.image_url.url !== 'string') {
      throw refuse(
        'message_invalid',
        `${at}.image_url`,
        `${at}.image_url must be {"url": string}.`,
      );
    }
    return { needs: { param: at, message: 'Image parts are not supported' } };
  }
  const unsupported = typeof type === 'string' ? UNSUPPORTED_PARTS[type] : undefined;
  throw refuse(
    'message_invalid',
    `${at}.type`,
    unsupported ?? 'Only text parts (and image_url parts in user messages) are supported.',
  );
}

function readSessionHeader(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !SESSION_ID_PATTERN.test(header)) {
    throw refuse(
      'session_id_invalid',
      'X-Session-Id',
      'The X-Session-Id header must be 1-128 characters of A-Z a-z 0-9 . _ : @ -.',
    );
  }
  return header;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
