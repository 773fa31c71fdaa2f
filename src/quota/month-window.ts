/**
 * @module quota/month-window
 * The quota window is the calendar month in a configured IANA time zone. A window is
 * named `YYYY-MM` (the counter's key) and spans [start, end) in Unix milliseconds.
 * Windows are cached: the time zone arithmetic runs once a month, not per request.
 */

export interface MonthWindow {
  /** `YYYY-MM` in the quota time zone. */
  readonly month: string;
  readonly startMs: number;
  /** The reset instant: 00:00 on the 1st of the next month, in the time zone. */
  readonly endMs: number;
}

export type { Clock } from '../util/clock.js';

export interface MonthWindows {
  readonly timeZone: string;
  /** The window containing `nowMs`. */
  at(nowMs: number): MonthWindow;
}

export function createMonthWindows(timeZone: string): MonthWindows {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  let cached: MonthWindow | undefined;

  function localParts(ms: number): number[] {
    const parts: Record<string, number> = {};
    for (const p of format.formatToParts(ms)) {
      if (p.type !== 'literal') parts[p.type] = Number(p.value);
    }
    return [
      parts.year ?? 0,
      parts.month ?? 1,
      parts.day ?? 1,
      parts.hour ?? 0,
      parts.minute ?? 0,
      parts.second ?? 0,
    ];
  }

  /** Offset of the zone from UTC at `ms`, in ms (Berlin in winter: +3 600 000). */
  function offsetAt(ms: number): number {
    const [y = 0, mo = 1, d = 1, h = 0, mi = 0, s = 0] = localParts(ms);
    const asUtc = Date.UTC(y, mo - 1, d, h, mi, s);
    return asUtc - (ms - (((ms % 1000) + 1000) % 1000));
  }

  /** The instant of local midnight starting the 1st of (year, month); month may overflow. */
  function startOfMonth(year: number, month: number): number {
    const localMidnightAsUtc = Date.UTC(year, month - 1, 1);
    let guess = localMidnightAsUtc - offsetAt(localMidnightAsUtc);
    // A second pass settles guesses that land on the other side of an offset change.
    guess = localMidnightAsUtc - offsetAt(guess);
    return guess;
  }

  function compute(nowMs: number): MonthWindow {
    const [year = 0, month = 1] = localParts(nowMs);
    const startMs = startOfMonth(year, month);
    const endMs = startOfMonth(year, month + 1);
    return {
      month: `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}`,
      startMs,
      endMs,
    };
  }

  return {
    timeZone,
    at(nowMs) {
      if (cached && nowMs >= cached.startMs && nowMs < cached.endMs) return cached;
      const window = compute(nowMs);
      if (nowMs >= window.startMs && nowMs < window.endMs) cached = window;
      return window;
    },
  };
}

/**
 * The window named `YYYY-MM`: the 15th at noon UTC lies inside that month in every time
 * zone (offsets stay within ±14 h).
 */
export function windowOfMonth(at: (nowMs: number) => MonthWindow, month: string): MonthWindow {
  const [year = 0, monthNumber = 1] = month.split('-').map(Number);
  return at(Date.UTC(year, monthNumber - 1, 15, 12));
}
