/**
 * @module quota/month-window
 * The quota window is the calendar month in a configured IANA time zone. A window is
 * named `YYYY-MM` (the counter's key) and spans [start, end) in Unix milliseconds.
 * Days (`YYYY-MM-DD`, [start, end) likewise) count the days of a month; both are cached:
 * the time zone arithmetic runs once a month and once a day, not per request.
 */

export interface MonthWindow {
  /** `YYYY-MM` in the quota time zone. */
  readonly month: string;
  readonly startMs: number;
  /** The reset instant: 00:00 on the 1st of the next month, in the time zone. */
  readonly endMs: number;
}

/** A calendar day in the quota time zone. */
interface DayWindow {
  /** `YYYY-MM-DD` in the quota time zone. */
  readonly day: string;
  readonly startMs: number;
  /** 00:00 of the next day, in the time zone. */
  readonly endMs: number;
}

export type { Clock } from '../util/clock.js';

export interface MonthWindows {
  readonly timeZone: string;
  /** The window containing `nowMs`. */
  at(nowMs: number): MonthWindow;
  /** The day containing `nowMs`. */
  dayAt(nowMs: number): DayWindow;
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
  let cachedDay: DayWindow | undefined;

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
    return startOfDay(year, month, 1);
  }

  /** The instant of local midnight starting (year, month, day); day and month may overflow. */
  function startOfDay(year: number, month: number, day: number): number {
    const localMidnightAsUtc = Date.UTC(year, month - 1, day);
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

  function computeDay(nowMs: number): DayWindow {
    const [year = 0, month = 1, day = 1] = localParts(nowMs);
    return {
      day: `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}`,
      startMs: startOfDay(year, month, day),
      endMs: startOfDay(year, month, day + 1),
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
    dayAt(nowMs) {
      if (cachedDay && nowMs >= cachedDay.startMs && nowMs < cachedDay.endMs) return cachedDay;
      const day = computeDay(nowMs);
      if (nowMs >= day.startMs && nowMs < day.endMs) cachedDay = day;
      return day;
    },
  };
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/**
 * The days of `day`'s month from the 1st up to `day` itself, in order:
 * `daysOfMonthUpTo('2026-03-03')` → `['2026-03-01', '2026-03-02', '2026-03-03']`.
 */
export function daysOfMonthUpTo(day: string): string[] {
  const month = day.slice(0, 7);
  const count = Number(day.slice(8, 10));
  return Array.from({ length: count }, (_, i) => `${month}-${pad2(i + 1)}`);
}

/** How many days the month `YYYY-MM` has. */
export function daysInMonth(month: string): number {
  const [year = 0, monthNumber = 1] = month.split('-').map(Number);
  return new Date(Date.UTC(year, monthNumber, 0)).getUTCDate();
}

/**
 * The window named `YYYY-MM`: the 15th at noon UTC lies inside that month in every time
 * zone (offsets stay within ±14 h).
 */
export function windowOfMonth(at: (nowMs: number) => MonthWindow, month: string): MonthWindow {
  const [year = 0, monthNumber = 1] = month.split('-').map(Number);
  return at(Date.UTC(year, monthNumber - 1, 15, 12));
}
