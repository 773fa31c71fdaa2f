/**
 * @module util/duration
 * Parses human durations used in configuration and the CLI: `500ms`, `30s`, `15m`, `24h`, `30d`.
 * A bare number is read as milliseconds.
 */

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/;

/** Returns the duration in milliseconds, or `undefined` when `text` is not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const value = Number(match[1]);
  const unit = (match[2] ?? 'ms') as keyof typeof UNIT_MS;
  const ms = Math.round(value * UNIT_MS[unit]);
  return Number.isSafeInteger(ms) ? ms : undefined;
}
