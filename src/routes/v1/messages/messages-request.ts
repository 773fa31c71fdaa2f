/**
 * @module routes/v1/messages/messages-request
 * Reads an Anthropic Messages body (docs/contract.md, "Anthropic's Messages door") into the
 * one turn request every door gives the use case. Pure: no I/O, no exceptions. A body the
 * turn cannot take becomes a failed `TurnRequest` whose detail names the field, decided by
 * the use case in the contract's order (after the key, the plan and the limits).
 *
 * What only an LLM core can take is written as Chat Completions, the language the `openai`
 * core already speaks: `tool_use` blocks become an assistant message's `tool_calls`,
 * `tool_result` blocks `tool` messages, image blocks `image_url` parts, tools functions,
 * `tool_choice` its Chat Completions value and `stop_sequences` `stop`. No core learns which
 * door a turn came through.
 */
import type { ProblemDetail, TurnRequest } from '../../../chat/take-turn.js';
import { estimateUsage } from '../../../chat/token-estimate.js';
import type {
  GatewayParameter,
  Json as JsonValue,
  Language,
  Sampling,
  Turn,
  WireMessage,
} from '../../../core/core-adapter.js';
import type { SoftErrorCode } from '../../../errors/error-codes.js';
import { SESSION_ID_PATTERN } from '../../../sessions/session-service.js';
import { hasMoreCodePointsThan } from '../../../util/code-points.js';
import { nestedDeeperThan } from '../../../util/json-depth.js';
import { parseJsonObject } from '../../request-body.js';
import { MODEL_NOT_FOUND } from '../completion-answer.js';
import { MODELS } from '../completion-request.js';

export interface MessagesRequest {
  /** The model as named by the client (echoed in the answer); `plauder-de` when unreadable. */
  readonly model: string;
  readonly language: Language;
  readonly stream: boolean;
  readonly turn: TurnRequest;
  /**
   * The input's tokens as estimated (src/chat/token-estimate.ts): the answer of
   * `count_tokens`, and the `input_tokens` of a stream's `message_start` before the core
   * has counted. 0 when the body was refused.
   */
  readonly inputTokens: number;
}

export interface MessagesReadOptions {
  readonly messageMaxChars: number;
  /** `/v1/messages` requires `max_tokens`, as Anthropic does; `count_tokens` does not. */
  readonly requireMaxTokens: boolean;
}

type Json = Record<string, unknown>;

class Refusal {
  constructor(
    readonly code: SoftErrorCode,
    readonly detail: ProblemDetail,
  ) {}
}

/** The door's answer names the field first, as Anthropic's do: `max_tokens: Field required`. */
const refuse = (code: SoftErrorCode, param: string | null, message: string, own?: string) =>
  new Refusal(code, { param, message, ...(own === undefined ? {} : { code: own }) });

export function parseMessagesRequest(
  contentType: string | undefined,
  body: unknown,
  sessionHeader: string | string[] | undefined,
  options: MessagesReadOptions,
): MessagesRequest {
  const object = parseJsonObject(contentType, body);
  const model = typeof object?.model === 'string' ? object.model : 'plauder-de';
  const language = MODELS[model] ?? 'de';
  const stream = object?.stream === true;
  const request = (turn: TurnRequest, inputTokens = 0): MessagesRequest => ({
    model,
    language,
    stream,
    turn,
    inputTokens,
  });
  try {
    if (object === undefined) {
      throw refuse(
        'body_invalid',
        null,
        'The body must be a JSON object sent as application/json.',
      );
    }
    const turn = readTurn(object, language, sessionHeader, options);
    return request(turn, estimateInput(turn));
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return request({ ok: false, code: error.code, detail: error.detail });
  }
}

/**
 * What the turn sends, estimated: the client's instructions and tool definitions, the
 * history it sent and the input (with `X-Session-Id` the stored history is not known here).
 */
function estimateInput(turn: Extract<TurnRequest, { ok: true }>): number {
  const tools = turn.gateway?.tools;
  const instructions = [...(turn.instructions ?? [])];
  if (tools !== undefined) instructions.push(JSON.stringify(tools));
  const prompt = { message: turn.message, history: turn.history ?? [], instructions };
  return estimateUsage(prompt, '').promptTokens;
}

function readTurn(
  body: Json,
  language: Language,
  sessionHeader: string | string[] | undefined,
  options: MessagesReadOptions,
): Extract<TurnRequest, { ok: true }> {
  readModel(body.model);
  refuseUnsupported(body);
  refuseTooDeep(body);
  const sampling = readSampling(body, options.requireMaxTokens);
  const instructions = readSystem(body.system);
  const { gateway, needs: parameterNeeds } = readGateway(body);
  const { message, history, input, needs } = readMessages(
    body.messages,
    options.messageMaxChars,
    language,
  );
  const sessionId = readSessionHeader(sessionHeader);
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
  if (model === undefined || model === null)
    throw refuse('body_invalid', 'model', 'Field required');
  if (typeof model !== 'string') throw refuse('body_invalid', 'model', 'Input should be a string');
  if (MODELS[model] === undefined) {
    const known = Object.keys(MODELS).join(', ');
    const message = `The model \`${model.slice(0, 100)}\` does not exist. Use one of: ${known}.`;
    throw refuse('body_invalid', 'model', message, MODEL_NOT_FOUND);
  }
}

/**
 * Features an OpenAI-compatible upstream cannot honour: refused by name rather than
 * silently dropped (docs/contract.md, "Anthropic's Messages door").
 */
const UNSUPPORTED: Readonly<Record<string, string>> = {
  top_k: 'top_k is not supported: an OpenAI-compatible upstream has no top_k.',
  container: 'Containers are not supported by plauder.',
  mcp_servers: 'Remote MCP servers are not supported by plauder.',
  context_management: 'Context management is not supported by plauder.',
  output_config: 'output_config is not supported by plauder.',
  output_format: 'output_format is not supported by plauder.',
};

function refuseUnsupported(body: Json): void {
  for (const [name, message] of Object.entries(UNSUPPORTED)) {
    if (body[name] !== undefined && body[name] !== null)
      throw refuse('body_invalid', name, message);
  }
  const thinking = body.thinking;
  if (thinking !== undefined && thinking !== null) {
    if (!isObject(thinking) || thinking.type !== 'disabled') {
      throw refuse(
        'body_invalid',
        'thinking',
        'Extended thinking is not supported: an OpenAI-compatible upstream cannot honour it.',
      );
    }
  }
}

/** How deeply a passed-through part may nest: far beyond any tool schema or message. */
const MAX_DEPTH = 64;

function refuseTooDeep(body: Json): void {
  for (const name of ['tools', 'tool_choice', 'system'] as const) {
    if (nestedDeeperThan(body[name], MAX_DEPTH)) {
      throw refuse('body_invalid', name, `nests deeper than ${MAX_DEPTH} levels.`);
    }
  }
  const messages = body.messages;
  if (!Array.isArray(messages)) return;
  messages.forEach((message, i) => {
    if (nestedDeeperThan(message, MAX_DEPTH)) {
      throw refuse('message_invalid', `messages.${i}`, `nests deeper than ${MAX_DEPTH} levels.`);
    }
  });
}

function readSampling(body: Json, requireMaxTokens: boolean): Sampling {
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
      throw refuse('body_invalid', name, `Input should be ${kind} from ${min} to ${max}`);
    }
    return value;
  };
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw refuse('body_invalid', 'stream', 'Input should be a valid boolean');
  }
  const maxTokens = number('max_tokens', 1, 1_000_000, true);
  if (maxTokens === undefined && requireMaxTokens) {
    throw refuse('body_invalid', 'max_tokens', 'Field required');
  }
  const temperature = number('temperature', 0, 1, false);
  const topP = number('top_p', 0, 1, false);
  const stop = readStopSequences(body.stop_sequences);
  const user = readUser(body.metadata);
  const sampling: { -readonly [K in keyof Sampling]: Sampling[K] } = {};
  if (maxTokens !== undefined) sampling.maxTokens = maxTokens;
  if (temperature !== undefined) sampling.temperature = temperature;
  if (topP !== undefined) sampling.topP = topP;
  if (stop !== undefined) sampling.stop = stop;
  if (user !== undefined) sampling.user = user;
  return sampling;
}

/** Chat Completions takes at most four stop sequences. */
const MAX_STOP_SEQUENCES = 4;

function readStopSequences(stop: unknown): readonly string[] | undefined {
  if (stop === undefined || stop === null) return undefined;
  if (!Array.isArray(stop) || !stop.every((s): s is string => typeof s === 'string')) {
    throw refuse('body_invalid', 'stop_sequences', 'Input should be a list of strings');
  }
  if (stop.length > MAX_STOP_SEQUENCES) {
    throw refuse(
      'body_invalid',
      'stop_sequences',
      `at most ${MAX_STOP_SEQUENCES} stop sequences: an OpenAI-compatible upstream takes no more.`,
    );
  }
  return stop.length === 0 ? undefined : stop;
}

/** `metadata.user_id`, passed on as the end-user id for the upstream's abuse monitoring. */
function readUser(metadata: unknown): string | undefined {
  if (metadata === undefined || metadata === null) return undefined;
  if (!isObject(metadata)) throw refuse('body_invalid', 'metadata', 'Input should be an object');
  const user = metadata.user_id;
  if (user === undefined || user === null) return undefined;
  if (typeof user !== 'string') {
    throw refuse('body_invalid', 'metadata.user_id', 'Input should be a string');
  }
  return user === '' ? undefined : user;
}

/** `system` as a string or text blocks: the client's instructions, one text. */
function readSystem(system: unknown): string[] {
  if (system === undefined || system === null) return [];
  if (typeof system === 'string') return system.trim() === '' ? [] : [system];
  if (!Array.isArray(system)) {
    throw refuse('body_invalid', 'system', 'Input should be a string or a list of text blocks');
  }
  const texts = system.map((block, i) => {
    if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') {
      throw refuse('body_invalid', `system.${i}`, 'Input should be a text block');
    }
    return block.text;
  });
  const text = texts.join('\n\n');
  return text.trim() === '' ? [] : [text];
}

type Gateway = { -readonly [K in GatewayParameter]?: JsonValue };

/**
 * Tools and `tool_choice`, as Chat Completions parameters for a gateway core; the first one
 * set names the refusal of a core that cannot honour them. Server tools (a `type` other
 * than `custom`) run on Anthropic's side, which an OpenAI-compatible upstream has not.
 */
function readGateway(body: Json): { gateway: Gateway; needs?: ProblemDetail } {
  const gateway: Gateway = {};
  let needs: ProblemDetail | undefined;
  const need = (param: string, message: string) => {
    needs ??= { param, message };
  };
  const tools = body.tools;
  if (tools !== undefined && tools !== null) {
    if (!Array.isArray(tools)) throw refuse('body_invalid', 'tools', 'Input should be a list');
    if (tools.length > 0) {
      gateway.tools = tools.map((tool, i) => functionTool(tool, `tools.${i}`));
      need('tools', 'tools are not supported');
    }
  }
  const choice = body.tool_choice;
  if (choice !== undefined && choice !== null) {
    const { value, parallel } = readToolChoice(choice);
    gateway.tool_choice = value;
    if (parallel === false) gateway.parallel_tool_calls = false;
    need('tool_choice', 'tool_choice is not supported');
  }
  return needs === undefined ? { gateway } : { gateway, needs };
}

function functionTool(tool: unknown, at: string): JsonValue {
  if (!isObject(tool)) throw refuse('body_invalid', at, 'Input should be an object');
  if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
    const type = typeof tool.type === 'string' ? `\`${tool.type.slice(0, 60)}\`` : 'this type';
    throw refuse(
      'body_invalid',
      at,
      `${type} is a server tool: an OpenAI-compatible upstream cannot run it. Use client tools (name, description, input_schema).`,
    );
  }
  if (typeof tool.name !== 'string' || tool.name === '') {
    throw refuse('body_invalid', `${at}.name`, 'Field required');
  }
  if (!isObject(tool.input_schema)) {
    throw refuse('body_invalid', `${at}.input_schema`, 'Input should be a JSON schema object');
  }
  if (tool.description !== undefined && typeof tool.description !== 'string') {
    throw refuse('body_invalid', `${at}.description`, 'Input should be a string');
  }
  const fn: Record<string, JsonValue> = { name: tool.name };
  if (typeof tool.description === 'string') fn.description = tool.description;
  fn.parameters = tool.input_schema as JsonValue;
  return { type: 'function', function: fn };
}

/** Anthropic's `tool_choice` as Chat Completions': auto, required, a named function, none. */
function readToolChoice(choice: unknown): { value: JsonValue; parallel?: boolean } {
  const invalid = () =>
    refuse(
      'body_invalid',
      'tool_choice',
      'Input should be {"type": "auto" | "any" | "none"} or {"type": "tool", "name": string}',
    );
  if (!isObject(choice)) throw invalid();
  const disable = choice.disable_parallel_tool_use;
  if (disable !== undefined && disable !== null && typeof disable !== 'boolean') {
    throw refuse(
      'body_invalid',
      'tool_choice.disable_parallel_tool_use',
      'Input should be a valid boolean',
    );
  }
  const parallel = disable === true ? { parallel: false } : {};
  switch (choice.type) {
    case 'auto':
      return { value: 'auto', ...parallel };
    case 'any':
      return { value: 'required', ...parallel };
    case 'none':
      return { value: 'none' };
    case 'tool':
      if (typeof choice.name !== 'string' || choice.name === '') {
        throw refuse('body_invalid', 'tool_choice.name', 'Field required');
      }
      return { value: { type: 'function', function: { name: choice.name } }, ...parallel };
    default:
      throw invalid();
  }
}

/** One Chat Completions message made from (a part of) an Anthropic message. */
interface ReadMessage {
  readonly role: 'user' | 'assistant' | 'tool';
  readonly text: string;
  readonly wire: WireMessage;
  /** Tool use, a tool result or an image: the first one, named. */
  readonly needs: ProblemDetail | undefined;
}

interface Conversation {
  readonly message: string;
  readonly history: Turn[];
  /** The turn's input as messages, when it is more than user text. */
  readonly input?: readonly WireMessage[];
  readonly needs?: ProblemDetail;
}

/**
 * The messages after the last assistant message are the turn's input (user text, or in an
 * agent loop the tool results); each earlier assistant message closes a turn of the
 * history with the user messages before it.
 */
function readMessages(
  messages: unknown,
  messageMaxChars: number,
  language: Language,
): Conversation {
  if (messages === undefined || messages === null) {
    throw refuse('message_missing', 'messages', 'Field required');
  }
  if (!Array.isArray(messages))
    throw refuse('message_invalid', 'messages', 'Input should be a list');
  if (messages.length === 0) {
    throw refuse('message_missing', 'messages', 'at least one message is required');
  }
  const read = messages.map((message, i) => readMessage(message, `messages.${i}`));
  const lastAt = `messages.${messages.length - 1}`;
  if (read.at(-1)?.[0]?.role === 'assistant') {
    throw refuse(
      'message_missing',
      lastAt,
      'The last message must be a user message: an assistant prefill is not supported.',
    );
  }
  const flat = read.flat();
  let start = flat.length;
  while (start > 0 && flat[start - 1]?.role !== 'assistant') start--;
  const trailing = flat.slice(start);
  const plain = trailing.every((m) => m.needs === undefined);
  const userText = trailing
    .filter((m) => m.role === 'user')
    .map((m) => m.text)
    .join('\n');
  const message = trailing.map((m) => m.text).join('\n');
  if (plain && message.trim() === '') {
    throw refuse('message_missing', `${lastAt}.content`, 'The last user message is empty.');
  }
  if (hasMoreCodePointsThan(userText, messageMaxChars)) {
    throw refuse(
      'message_too_long',
      `${lastAt}.content`,
      `The last user message is longer than ${messageMaxChars} characters.`,
    );
  }
  const history = historyOf(flat.slice(0, start), language);
  const needs = flat.find((m) => m.needs !== undefined)?.needs;
  const conversation: Conversation = { message, history, ...(needs ? { needs } : {}) };
  return plain ? conversation : { ...conversation, input: trailing.map((m) => m.wire) };
}

/** Earlier messages as turns, one per assistant message; tool use and images keep their messages. */
function historyOf(messages: readonly ReadMessage[], language: Language): Turn[] {
  const history: Turn[] = [];
  let run: ReadMessage[] = [];
  for (const m of messages) {
    if (m.role !== 'assistant') {
      run.push(m);
      continue;
    }
    const group = [...run, m];
    run = [];
    const said = group
      .filter((g) => g.role !== 'assistant')
      .map((g) => g.text)
      .join('\n');
    const turn: Turn = { message: said, reply: m.text, language };
    if (group.some((g) => g.needs !== undefined)) {
      history.push({ ...turn, wire: group.map((g) => g.wire) });
    } else if (said !== '' || m.text !== '') {
      history.push(turn);
    }
  }
  return history;
}

function readMessage(message: unknown, at: string): ReadMessage[] {
  if (!isObject(message)) throw refuse('message_invalid', at, 'Input should be an object');
  const role = message.role;
  if (role !== 'user' && role !== 'assistant') {
    throw refuse('message_invalid', `${at}.role`, "Input should be 'user' or 'assistant'");
  }
  const content = message.content;
  if (typeof content === 'string') {
    return [{ role, text: content, wire: { role, content }, needs: undefined }];
  }
  if (!Array.isArray(content)) {
    throw refuse(
      'message_invalid',
      `${at}.content`,
      'Input should be a string or a list of content blocks',
    );
  }
  return role === 'user' ? readUserBlocks(content, at) : [readAssistantBlocks(content, at)];
}

/** Tool results first (as Anthropic requires them), each a `tool` message, then the user's text and images. */
function readUserBlocks(blocks: readonly unknown[], at: string): ReadMessage[] {
  const results: ReadMessage[] = [];
  const parts: JsonValue[] = [];
  const texts: string[] = [];
  let image: ProblemDetail | undefined;
  blocks.forEach((block, j) => {
    const where = `${at}.content.${j}`;
    if (!isObject(block)) throw refuse('message_invalid', where, 'Input should be an object');
    switch (block.type) {
      case 'text': {
        const text = blockText(block, where);
        texts.push(text);
        parts.push({ type: 'text', text });
        return;
      }
      case 'image':
        parts.push({ type: 'image_url', image_url: { url: imageUrl(block.source, where) } });
        image ??= { param: where, message: 'Image blocks are not supported' };
        return;
      case 'tool_result':
        results.push(toolResult(block, where));
        return;
      default:
        throw unsupportedBlock(block.type, where, 'text, image and tool_result blocks');
    }
  });
  if (parts.length === 0) return results;
  const text = texts.join('\n');
  const content: JsonValue = image === undefined ? text : parts;
  return [...results, { role: 'user', text, wire: { role: 'user', content }, needs: image }];
}

function toolResult(block: Json, at: string): ReadMessage {
  const id = block.tool_use_id;
  if (typeof id !== 'string' || id === '') {
    throw refuse('message_invalid', `${at}.tool_use_id`, 'Field required');
  }
  const content = block.content;
  let text = '';
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    text = content
      .map((part, k) => {
        const where = `${at}.content.${k}`;
        if (isObject(part) && part.type === 'text') return blockText(part, where);
        throw refuse(
          'message_invalid',
          where,
          'Only text blocks are supported in a tool result: Chat Completions tool messages carry text.',
        );
      })
      .join('\n');
  } else if (content !== undefined && content !== null) {
    throw refuse(
      'message_invalid',
      `${at}.content`,
      'Input should be a string or a list of text blocks',
    );
  }
  const wire = { role: 'tool', tool_call_id: id, content: text };
  return {
    role: 'tool',
    text,
    wire,
    needs: { param: at, message: 'Tool results are not supported' },
  };
}

/** An assistant message: its text, and its `tool_use` blocks as tool calls. Thinking blocks are left out. */
function readAssistantBlocks(blocks: readonly unknown[], at: string): ReadMessage {
  const texts: string[] = [];
  const calls: JsonValue[] = [];
  let needs: ProblemDetail | undefined;
  blocks.forEach((block, j) => {
    const where = `${at}.content.${j}`;
    if (!isObject(block)) throw refuse('message_invalid', where, 'Input should be an object');
    switch (block.type) {
      case 'text':
        texts.push(blockText(block, where));
        return;
      case 'tool_use':
        calls.push(toolCall(block, where));
        needs ??= { param: where, message: 'Tool use is not supported' };
        return;
      // Reasoning the client got from another model: an OpenAI-compatible upstream takes none.
      case 'thinking':
      case 'redacted_thinking':
        return;
      default:
        throw unsupportedBlock(block.type, where, 'text and tool_use blocks');
    }
  });
  const text = texts.join('\n');
  const wire: WireMessage =
    calls.length === 0
      ? { role: 'assistant', content: text }
      : { role: 'assistant', content: text === '' ? null : text, tool_calls: calls };
  return { role: 'assistant', text, wire, needs };
}

function toolCall(block: Json, at: string): JsonValue {
  if (typeof block.id !== 'string' || block.id === '') {
    throw refuse('message_invalid', `${at}.id`, 'Field required');
  }
  if (typeof block.name !== 'string' || block.name === '') {
    throw refuse('message_invalid', `${at}.name`, 'Field required');
  }
  if (!isObject(block.input)) {
    throw refuse('message_invalid', `${at}.input`, 'Input should be an object');
  }
  const args = JSON.stringify(block.input);
  return { id: block.id, type: 'function', function: { name: block.name, arguments: args } };
}

function blockText(block: Json, at: string): string {
  if (typeof block.text !== 'string') {
    throw refuse('message_invalid', `${at}.text`, 'Input should be a string');
  }
  return block.text;
}

/** A base64 image as a data URL, a URL image as it is; uploaded files are not offered. */
function imageUrl(source: unknown, at: string): string {
  if (isObject(source) && source.type === 'base64') {
    const { media_type: media, data } = source;
    if (typeof media === 'string' && typeof data === 'string')
      return `data:${media};base64,${data}`;
  }
  if (isObject(source) && source.type === 'url' && typeof source.url === 'string') {
    return source.url;
  }
  throw refuse(
    'message_invalid',
    `${at}.source`,
    'Input should be {"type": "base64", "media_type", "data"} or {"type": "url", "url"}',
  );
}

function unsupportedBlock(type: unknown, at: string, supported: string): Refusal {
  const named = typeof type === 'string' ? `\`${type.slice(0, 60)}\` blocks are` : 'This block is';
  return refuse('message_invalid', `${at}.type`, `${named} not supported: use ${supported}.`);
}

function readSessionHeader(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !SESSION_ID_PATTERN.test(header)) {
    throw refuse(
      'session_id_invalid',
      'X-Session-Id',
      'The header must be 1-128 characters of A-Z a-z 0-9 . _ : @ -.',
    );
  }
  return header;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
