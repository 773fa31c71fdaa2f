import { describe, expect, it } from 'vitest';
import { createMonthWindows, daysInMonth, daysOfMonthUpTo } from '../../src/quota/month-window.js';

const DAY = 86_400_000;

describe('month windows', () => {
  it('spans the calendar month in UTC', () => {
    const w = createMonthWindows('UTC').at(Date.UTC(2026, 10, 21, 12));
    expect(w).toEqual({
      month: '2026-11',
      startMs: Date.UTC(2026, 10, 1),
      endMs: Date.UTC(2026, 11, 1),
    });
  });

  it('rolls December over into January of the next year', () => {
    const windows = createMonthWindows('UTC');
    expect(windows.at(Date.UTC(2026, 11, 31, 23, 59, 59, 999)).month).toBe('2026-12');
    expect(windows.at(Date.UTC(2027, 0, 1)).month).toBe('2027-01');
    expect(windows.at(Date.UTC(2026, 11, 5)).endMs).toBe(Date.UTC(2027, 0, 1));
  });

  it('starts the month at local midnight in Europe/Berlin (UTC+1 in winter)', () => {
    const windows = createMonthWindows('Europe/Berlin');
    const start = Date.UTC(2026, 10, 30, 23); // 2026-12-01T00:00 in Berlin
    expect(windows.at(start - 1).month).toBe('2026-11');
    expect(windows.at(start).month).toBe('2026-12');
    expect(windows.at(start).startMs).toBe(start);
    expect(windows.at(start).endMs).toBe(Date.UTC(2026, 11, 31, 23));
  });

  it('is 31 days minus one hour in March and plus one hour in October in Berlin (DST)', () => {
    const windows = createMonthWindows('Europe/Berlin');
    const march = windows.at(Date.UTC(2027, 2, 15));
    expect(march.startMs).toBe(Date.UTC(2027, 1, 28, 23));
    expect(march.endMs).toBe(Date.UTC(2027, 2, 31, 22));
    expect(march.endMs - march.startMs).toBe(31 * DAY - 3_600_000);
    const october = windows.at(Date.UTC(2027, 9, 15));
    expect(october.endMs - october.startMs).toBe(31 * DAY + 3_600_000);
  });

  it('knows 29 February 2028', () => {
    const w = createMonthWindows('UTC').at(Date.UTC(2028, 1, 29, 23, 59, 59, 999));
    expect(w.month).toBe('2028-02');
    expect(w.endMs - w.startMs).toBe(29 * DAY);
  });

  it('handles zones east and west of UTC', () => {
    const tokyo = createMonthWindows('Asia/Tokyo').at(Date.UTC(2026, 10, 30, 15)); // Dec 1 00:00 JST
    expect(tokyo.month).toBe('2026-12');
    const newYork = createMonthWindows('America/New_York').at(Date.UTC(2026, 11, 1, 4, 59)); // Nov 30 23:59 EST
    expect(newYork.month).toBe('2026-11');
    expect(newYork.endMs).toBe(Date.UTC(2026, 11, 1, 5));
  });

  it('gives the same window for every instant of a month, cached or not', () => {
    const windows = createMonthWindows('Europe/Berlin');
    const reference = createMonthWindows('Europe/Berlin');
    for (let t = Date.UTC(2026, 9, 20); t < Date.UTC(2027, 3, 10); t += 7 * 3_600_000 + 13_000) {
      const w = windows.at(t);
      expect(t).toBeGreaterThanOrEqual(w.startMs);
      expect(t).toBeLessThan(w.endMs);
      expect(w).toEqual(reference.at(t));
    }
  });
});

describe('day windows', () => {
  it('names the day in the time zone and spans local midnight to midnight', () => {
    const berlin = createMonthWindows('Europe/Berlin');
    const midnight = Date.UTC(2026, 10, 30, 23); // 2026-12-01T00:00 in Berlin
    expect(berlin.dayAt(midnight - 1)).toEqual({
      day: '2026-11-30',
      startMs: Date.UTC(2026, 10, 29, 23),
      endMs: midnight,
    });
    expect(berlin.dayAt(midnight).day).toBe('2026-12-01');
    // The same instant is still the 30th in UTC.
    expect(createMonthWindows('UTC').dayAt(midnight).day).toBe('2026-11-30');
  });

  it('has 23 and 25 hours on the days the clocks change in Berlin', () => {
    const windows = createMonthWindows('Europe/Berlin');
    const spring = windows.dayAt(Date.UTC(2027, 2, 28, 12));
    expect(spring.day).toBe('2027-03-28');
    expect(spring.endMs - spring.startMs).toBe(DAY - 3_600_000);
    const autumn = windows.dayAt(Date.UTC(2027, 9, 31, 12));
    expect(autumn.day).toBe('2027-10-31');
    expect(autumn.endMs - autumn.startMs).toBe(DAY + 3_600_000);
  });

  it('answers from its cache within the day and moves on at midnight', () => {
    const windows = createMonthWindows('America/New_York');
    const noon = Date.UTC(2026, 5, 10, 16); // 12:00 in New York (UTC-4)
    expect(windows.dayAt(noon)).toBe(windows.dayAt(noon + 3_600_000));
    expect(windows.dayAt(Date.UTC(2026, 5, 11, 3, 59, 59, 999)).day).toBe('2026-06-10');
    expect(windows.dayAt(Date.UTC(2026, 5, 11, 4)).day).toBe('2026-06-11');
  });

  it('lists the days of a month up to a day, and counts the days of a month', () => {
    expect(daysOfMonthUpTo('2026-03-03')).toEqual(['2026-03-01', '2026-03-02', '2026-03-03']);
    expect(daysOfMonthUpTo('2026-02-28')).toHaveLength(28);
    expect(daysInMonth('2026-02')).toBe(28);
    expect(daysInMonth('2028-02')).toBe(29);
    expect(daysInMonth('2026-12')).toBe(31);
  });
});
