/**
 * @module errors/safe-error
 * What of an error may be logged. Messages of errors we do not own can quote request
 * data (a parser echoing its input, a core repeating the user's text), so only our own
 * and the database driver's messages are kept; for the rest, type, code and stack frames.
 */
import { ApiError } from './api-error.js';

const TRUSTED_MESSAGES = new Set([
  'ApiError',
  'CoreError',
  'SqliteError',
  'ConfigError',
  'KnowledgeBaseError',
]);

export interface SafeError {
  type: string;
  code?: string;
  message?: string;
  stack?: string;
  cause?: SafeError;
}

export function safeError(error: unknown, depth = 0): SafeError {
  if (!(error instanceof Error)) return { type: typeof error };
  const safe: SafeError = { type: error.name };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') safe.code = code;
  if (TRUSTED_MESSAGES.has(error.name) || error instanceof ApiError) safe.message = error.message;
  // The first stack line repeats the message; keep only the frames.
  if (error.stack) safe.stack = error.stack.split('\n').slice(1, 8).join('\n');
  if (error.cause !== undefined && depth < 3) safe.cause = safeError(error.cause, depth + 1);
  return safe;
}
