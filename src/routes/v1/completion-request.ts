/**
 * @module routes/v1/completion-request
 * Reads an OpenAI Chat Completions body (contract §10) into a turn request. Pure: no I/O, no
 * exceptions. A body the turn cannot take becomes a failed `TurnRequest` whose detail names
 * the parameter, as OpenAI's 400s do; the use case decides when it is answered (after the
 * key, the plan and the limits), exactly like the soft errors of `/api/chat`.
 *
 * The last message is the turn's message (a user message); earlier user and assistant
 * messages are the history, system and developer messages the client's instructions.
 */
import type { ProblemDetail, TurnRequest } from '../../chat/take-turn.js';
import type { Language, Sampling, Turn } from '../../core/core-adapter.js';
import type { SoftErrorCode } from '../../errors/error-codes.js';
import { SESSION_ID_PATTERN } from '../../sessions/session-service.js';
import { parseJsonObject } from '../api/chat/chat-request.js';

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

function readTurn(
  body: Json,
  language: Language,
  sessionHeader: string | string[] | undefined,
  messageMaxChars: number,
): TurnRequest {
  readModel(body.model);
  refuseUnsupported(body);
  const sampling = readSampling(body);
  const { message, history, instructions } = readMessages(body.messages, messageMaxChars, language);
  const sessionId = readSessionHeader(sessionHeader);
  return {
    ok: true,
    message,
    sessionId,
    // With X-Session-Id the stored session is the history (contract §10).
    history: sessionId === undefined ? history : undefined,
    instructions: instructions.length > 0 ? instructions : undefined,
    sampling: Object.keys(sampling).length > 0 ? sampling : undefined,
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

/** Parameters plauder does not offer: refused by name rather than silently ignored. */
function refuseUnsupported(body: Json): void {
  if (body.n !== undefined && body.n !== null && body.n !== 1) {
    throw refuse('body_invalid', 'n', 'Only n=1 is supported: plauder makes one reply per turn.');
  }
  // Any value, an empty list too: a client that sends tools expects a core that can call them.
  for (const name of ['tools', 'functions'] as const) {
    if (body[name] !== undefined) {
      throw refuse('body_invalid', name, `${name} are not supported by plauder.`);
    }
  }
  for (const name of ['tool_choice', 'function_call'] as const) {
    const value = body[name];
    if (value !== undefined && value !== null && value !== 'none' && value !== 'auto') {
      throw refuse('body_invalid', name, `${name} is not supported by plauder.`);
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
    return value as number;
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
  if (Array.isArray(stop) && stop.length <= 4 && stop.every((s) => typeof s === 'string')) {
    return stop.length === 0 ? undefined : (stop as string[]);
  }
  throw refuse('body_invalid', 'stop', 'stop must be a string or an array of up to 4 strings.');
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant']);

interface Conversation {
  readonly message: string;
  readonly history: Turn[];
  readonly instructions: string[];
}

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
  const last = read.at(-1);
  if (last?.role !== 'user') {
    throw refuse('message_missing', 'messages', 'The last message must be a user message.');
  }
  if (last.text.trim() === '') {
    throw refuse(
      'message_missing',
      `messages[${read.length - 1}].content`,
      'The last user message is empty.',
    );
  }
  if (codePoints(last.text) > messageMaxChars) {
    throw refuse(
      'message_too_long',
      `messages[${read.length - 1}].content`,
      `The last user message is longer than ${messageMaxChars} characters.`,
    );
  }
  const history: Turn[] = [];
  const instructions: string[] = [];
  let open: { message: string; reply: string } | undefined;
  for (const { role, text } of read.slice(0, -1)) {
    if (role === 'system' || role === 'developer') {
      if (text.trim() !== '') instructions.push(text);
    } else if (role === 'user') {
      if (open) history.push({ message: open.message, reply: open.reply, language });
      open = { message: text, reply: '' };
    } else {
      history.push({ message: open?.message ?? '', reply: text, language });
      open = undefined;
    }
  }
  if (open) history.push({ message: open.message, reply: open.reply, language });
  return { message: last.text, history: withoutEmpty(history), instructions };
}

function withoutEmpty(history: Turn[]): Turn[] {
  return history.filter((turn) => turn.message !== '' || turn.reply !== '');
}

function readMessage(message: unknown, at: string): { role: string; text: string } {
  if (!isObject(message)) throw refuse('message_invalid', at, `${at} must be an object.`);
  const role = message.role;
  if (typeof role !== 'string' || !ROLES.has(role)) {
    const what = typeof role === 'string' ? `'${role.slice(0, 40)}' messages are` : 'role is';
    throw refuse(
      'message_invalid',
      `${at}.role`,
      `${what} not supported: use system, developer, user or assistant.`,
    );
  }
  const toolCalls = message.tool_calls;
  if (Array.isArray(toolCalls) && toolCalls.length > 0) {
    throw refuse('message_invalid', `${at}.tool_calls`, 'Tool calls are not supported by plauder.');
  }
  return { role, text: readContent(message.content, role, `${at}.content`) };
}

function readContent(content: unknown, role: string, at: string): string {
  if (typeof content === 'string') return content;
  if ((content === null || content === undefined) && role === 'assistant') return '';
  if (!Array.isArray(content)) {
    throw refuse('message_invalid', at, `${at} must be a string or an array of text parts.`);
  }
  return content.map((part, j) => readPart(part, `${at}[${j}]`)).join('\n');
}

const UNSUPPORTED_PARTS: Readonly<Record<string, string>> = {
  image_url: 'Image parts are not supported by plauder.',
  input_audio: 'Audio parts are not supported by plauder.',
  file: 'File parts are not supported by plauder.',
  refusal: 'Refusal parts are not supported by plauder.',
};

function readPart(part: unknown, at: string): string {
  if (!isObject(part)) throw refuse('message_invalid', at, `${at} must be an object.`);
  const type = part.type;
  if (type === 'text') {
    if (typeof part.text !== 'string') {
      throw refuse('message_invalid', `${at}.text`, `${at}.text must be a string.`);
    }
    return part.text;
  }
  const unsupported = typeof type === 'string' ? UNSUPPORTED_PARTS[type] : undefined;
  throw refuse('message_invalid', `${at}.type`, unsupported ?? 'Only text parts are supported.');
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

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
