/**
 * @module errors/api-error
 * `ApiError` is the one exception routes throw; the error handler turns it into the
 * contract's envelope `{"error": {"code", "message", "requestId"}}`.
 */
import { ERROR_MESSAGES, type ErrorCode, statusOf } from './error-codes.js';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    /** Extra response headers (WWW-Authenticate, Retry-After, ...). */
    readonly headers: Readonly<Record<string, string>> = {},
    /**
     * A status other than the code's own, on every door: 503 for `core_unavailable` when
     * every upstream rests (docs/core.md, "Several upstreams").
     */
    readonly statusOverride?: number,
  ) {
    super(ERROR_MESSAGES[code]);
    this.statusCode = statusOverride ?? statusOf(code);
  }
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; requestId: string };
}

export function errorBody(code: ErrorCode, requestId: string): ErrorBody {
  return { error: { code, message: ERROR_MESSAGES[code], requestId } };
}
