/**
 * @module idempotency/idempotency-key
 * Reads the `Idempotency-Key` request header (draft-ietf-httpapi-idempotency-key-header):
 * 1-255 printable ASCII characters, sent bare or as a quoted string.
 */

export type IdempotencyKeyHeader =
  | { readonly ok: true; readonly key: string | undefined }
  | { readonly ok: false };

const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/** `undefined` when the header is absent; not ok when it is present but unusable. */
export function parseIdempotencyKey(header: string | string[] | undefined): IdempotencyKeyHeader {
  if (header === undefined) return { ok: true, key: undefined };
  // Sent twice: which one the client meant is unknown.
  if (Array.isArray(header)) return { ok: false };
  const key = unquote(header.trim());
  if (
    key === undefined ||
    key.length === 0 ||
    key.length > IDEMPOTENCY_KEY_MAX_LENGTH ||
    !PRINTABLE_ASCII.test(key)
  ) {
    return { ok: false };
  }
  return { ok: true, key };
}

/** A structured-field string (`"abc"`, with `\"` and `\\` escapes) or the bare value. */
function unquote(value: string): string | undefined {
  if (!value.startsWith('"')) return value;
  if (value.length < 2 || !value.endsWith('"')) return undefined;
  let result = '';
  for (let i = 1; i < value.length - 1; i++) {
    const char = value[i];
    if (char === '\\') {
      const next = value[++i];
      if ((next !== '"' && next !== '\\') || i >= value.length - 1) return undefined;
      result += next;
    } else if (char === '"') {
      return undefined;
    } else {
      result += char;
    }
  }
  return result;
}
