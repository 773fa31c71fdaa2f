/**
 * @module routes/mcp/mcp-input
 * What `/mcp` checks of a POST before the MCP SDK reads it, so that input no agent sends
 * gets a clear answer rather than the SDK's: the body must be UTF-8 (refused with a JSON-RPC
 * parse error, as `/api` and `/v1` refuse it, instead of being read with replacement
 * characters), a JSON body in another charset is 415, and the `arguments` of a `tools/call`
 * must be a JSON object of reasonable depth (else -32602 with an English sentence, instead of
 * -32603 with a schema dump, or a stack overflow deep in a validator).
 */
import { isUtf8 } from 'node:buffer';
import { nestedDeeperThan } from '../../util/json-depth.js';
import { isJsonContentType, isJsonMediaType } from '../request-body.js';

/** A JSON-RPC error answer (`id` null when the message could not be read). */
export interface JsonRpcError {
  readonly jsonrpc: '2.0';
  readonly id: string | number | null;
  readonly error: { readonly code: number; readonly message: string };
}

export type McpInput =
  /** Passed on: `body` (what the SDK reads) and the answers to calls refused here. */
  | {
      readonly ok: true;
      readonly body: Buffer | undefined;
      readonly refused: readonly JsonRpcError[];
      /** The POST was a batch: its answers are one array. */
      readonly batch: boolean;
    }
  | { readonly ok: false; readonly status: number; readonly answer: JsonRpcError };

/** The tools take flat arguments; far deeper nesting is no call an agent means to make. */
const MAX_ARGUMENT_DEPTH = 32;

const NOT_AN_OBJECT =
  'Invalid params: "arguments" must be a JSON object, such as {"message": "Hallo"}.';
const TOO_DEEP = `Invalid params: "arguments" are nested deeper than ${MAX_ARGUMENT_DEPTH} levels.`;

export function checkMcpInput(contentType: string | undefined, body: unknown): McpInput {
  const bytes = Buffer.isBuffer(body) ? body : undefined;
  if (contentType !== undefined && isJsonMediaType(contentType) && !isJsonContentType(contentType))
    return refuse(
      415,
      -32000,
      'Unsupported Media Type: JSON must be sent as UTF-8 (charset=utf-8 or none).',
    );
  if (bytes === undefined || bytes.length === 0) return passed(bytes);
  if (!isUtf8(bytes)) return refuse(400, -32700, 'Parse error: the body is not valid UTF-8.');
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    // The SDK answers malformed JSON with its own parse error.
    return passed(bytes);
  }
  const batch = Array.isArray(parsed);
  const messages: unknown[] = batch ? (parsed as unknown[]) : [parsed];
  const refused: JsonRpcError[] = [];
  const kept = messages.filter((message) => {
    const problem = argumentsProblem(message);
    if (problem === undefined) return true;
    const id = (message as { id?: unknown }).id;
    refused.push(
      errorAnswer(typeof id === 'string' || typeof id === 'number' ? id : null, -32602, problem),
    );
    return false;
  });
  if (refused.length === 0) return passed(bytes);
  const rest = kept.length === 0 ? undefined : Buffer.from(JSON.stringify(batch ? kept : kept[0]));
  return { ok: true, body: rest, refused, batch };
}

/** What is wrong with a `tools/call` request's arguments, if anything. */
function argumentsProblem(message: unknown): string | undefined {
  if (!isPlainObject(message) || message.method !== 'tools/call' || message.id === undefined)
    return undefined;
  const params = message.params;
  if (!isPlainObject(params) || params.arguments === undefined) return undefined;
  if (!isPlainObject(params.arguments)) return NOT_AN_OBJECT;
  return nestedDeeperThan(params.arguments, MAX_ARGUMENT_DEPTH) ? TOO_DEEP : undefined;
}

/** Whether `value` nests deeper than `max` (without recursion: the depth is the attacker's). */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function passed(body: Buffer | undefined): McpInput {
  return { ok: true, body, refused: [], batch: false };
}

function refuse(status: number, code: number, message: string): McpInput {
  return { ok: false, status, answer: errorAnswer(null, code, message) };
}

function errorAnswer(id: string | number | null, code: number, message: string): JsonRpcError {
  return { jsonrpc: '2.0', id, error: { code, message } };
}
