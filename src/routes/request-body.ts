/**
 * @module routes/request-body
 * The request-body rules every front door shares: which Content-Type is JSON, how the bytes
 * become a JSON object (UTF-8 only, no prototype-poisoning keys), and the fields of a chat
 * message (rows 4-8 of the decision table, docs/contract.md, "A turn"). Pure: no I/O, no
 * exceptions; a door renders the result in its own shape.
 */
import type { FastifyRequest } from 'fastify';
import secureJson from 'secure-json-parse';
import type { SoftErrorCode } from '../errors/error-codes.js';
import { SESSION_ID_PATTERN } from '../sessions/session-service.js';
import { hasMoreCodePointsThan } from '../util/code-points.js';

export type ChatRequest =
  | { readonly ok: true; readonly message: string; readonly sessionId: string | undefined }
  | { readonly ok: false; readonly code: SoftErrorCode };

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
  if (hasMoreCodePointsThan(message, messageMaxChars)) {
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

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

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

/** The media type is `application/json`, whatever its parameters. */
export function isJsonMediaType(contentType: string): boolean {
  return contentType.split(';')[0]?.trim().toLowerCase() === 'application/json';
}

/**
 * `application/json`, with no charset or UTF-8's: JSON is UTF-8 (RFC 8259), and a body a
 * client says is in another charset would otherwise be read as something it did not send.
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined || !isJsonMediaType(contentType)) return false;
  return contentType
    .split(';')
    .slice(1)
    .every((parameter) => {
      const equals = parameter.indexOf('=');
      if (equals === -1 || parameter.slice(0, equals).trim().toLowerCase() !== 'charset')
        return true;
      const charset = parameter
        .slice(equals + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase();
      return charset === 'utf-8' || charset === 'utf8';
    });
}

/**
 * Fastify answers a malformed Content-Type (`""`, `json`, `a, b`) with 415 before the
 * handler runs, which would skip row 1 (a bad key gets 401 whatever the body) and row 4
 * (a wrong content type is the soft error `body_invalid`), and give the admin API a 415 in
 * no envelope of its own. A door only asks "JSON or not?", so the header is reduced to that
 * answer, which Fastify always accepts.
 */
export async function judgeContentTypeLater(request: FastifyRequest): Promise<void> {
  const contentType = request.headers['content-type'];
  if (contentType === undefined) return;
  request.headers['content-type'] = isJsonContentType(contentType)
    ? 'application/json'
    : 'application/octet-stream';
}
