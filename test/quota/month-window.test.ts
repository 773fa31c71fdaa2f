import { describe, expect, it } from 'vitest';
import { createMonthWindows } from '../../src/quota/month-window.js';

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
