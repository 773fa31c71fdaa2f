/**
 * @module keys/grace
 * How long a rotated key's old secret may stay valid: the same rule for the CLI's
 * `--grace` and the admin API's `grace`.
 */
import { parseDuration } from '../util/duration.js';

/** A year: longer is no rotation, and the old secret's end must stay a valid date. */
const MAX_GRACE_MS = 365 * 86_400_000;

/** The grace in milliseconds, or undefined when `text` is no duration from 0 to 365d. */
export function parseGrace(text: string): number | undefined {
  const ms = parseDuration(text);
  return ms === undefined || ms > MAX_GRACE_MS ? undefined : ms;
}
