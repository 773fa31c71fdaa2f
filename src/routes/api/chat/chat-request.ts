/**
 * @module routes/api/chat/chat-request
 * Validates a raw chat request body in the contract's order (rows 4-8 of the decision
 * table). Pure: no I/O, no exceptions; the result says which soft error applies.
 * `parseChatFields` (rows 5-8) is shared with the MCP tool `chat`.
 */
import secureJson from 'secure-json-parse';
import type { SoftErrorCode } from '../../../errors/error-codes.js';
import { SESSION_ID_PATTERN } from '../../../sessions/session-service.js';

export type ChatRequest =
  | { readonly ok: true; readonly message: string; readonly sessionId: string | undefined }
  | { readonly ok: false; readonly code: SoftErrorCode };

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Rows 5-8 on fields already read as an object: the JSON body of `/api/chat`, the
 * arguments of the MCP tool `chat`. Unknown fields are ignored.
 */
export function parseChatFields(
  object: Readonly<Record<string, unknown>>,
  messageMaxChars: number,
): ChatRequest {
  const message = object.message;
  if (message === undefined || message === null) return { ok: false, code: 'message_missing' };
  if (typeof message !== 'string') return { ok: false, code: 'message_invalid' };
  if (message.trim().length === 0) return { ok: false, code: 'message_missing' };
  if (codePointLength(message, messageMaxChars) > messageMaxChars) {
    return { ok: false, code: 'message_too_long' };
  }

  // `null` is read as "no session", like an absent field.
  const sessionId = object.sessionId;
  if (sessionId === undefined || sessionId === null)
    return { ok: true, message, sessionId: undefined };
  if (typeof sessionId !== 'string' || !SESSION_ID_PATTERN.test(sessionId)) {
    return { ok: false, code: 'session_id_invalid' };
  }
  return { ok: true, message, sessionId };
}

/**
 * The body as a JSON object, or undefined (wrong type, not UTF-8, not JSON, not an object,
 * or carrying `__proto__` / `constructor.prototype` keys: refused as Fastify's own parser
 * refuses them, with the same maintained parser).
 */
export function parseJsonObject(
  contentType: string | undefined,
  body: unknown,
): Record<string, unknown> | undefined {
  if (!isJsonContentType(contentType) || !Buffer.isBuffer(body) || body.length === 0)
    return undefined;
  let value: unknown;
  try {
    value = secureJson.parse(utf8.decode(body), undefined, POISONING_REFUSED);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return value as Record<string, unknown>;
}

const POISONING_REFUSED = { protoAction: 'error', constructorAction: 'error' } as const;

/**
 * `application/json`, with no charset or UTF-8's: JSON is UTF-8 (RFC 8259), and a body a
 * client says is in another charset would otherwise be read as something it did not send.
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const [mediaType = '', ...parameters] = contentType.split(';');
  if (mediaType.trim().toLowerCase() !== 'application/json') return false;
  return parameters.every((parameter) => {
    const equals = parameter.indexOf('=');
    if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset') return true;
    const charset = parameter
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase();
    return charset === 'utf-8' || charset === 'utf8';
  });
}

/** Characters as users count them (code points), stopping early once past `max`. */
function codePointLength(text: string, max: number): number {
  if (text.length <= max) return text.length;
  let count = 0;
  for (const _ of text) {
    count++;
    if (count > max) break;
  }
  return count;
}
