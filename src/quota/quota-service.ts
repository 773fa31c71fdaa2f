/**
 * @module quota/quota-service
 * Monthly quota per key: reserve one request atomically before the core runs, refund it
 * when the core fails. The month is always the one the request was admitted in.
 */
import type { UsageRepository } from '../storage/repositories/usage-repository.js';
import type { MonthWindow, MonthWindows } from './month-window.js';
import { createRefundQueue } from './refund-queue.js';

export interface QuotaState {
  readonly limit: number;
  readonly used: number;
  readonly window: MonthWindow;
  readonly nowMs: number;
}

export type Reservation =
  | { readonly ok: true; readonly state: QuotaState; refund(): Promise<void> }
  | { readonly ok: false; readonly state: QuotaState };

export interface MonthUsage {
  /** `YYYY-MM` in the quota time zone. */
  readonly month: string;
  readonly used: number;
}

export interface QuotaService {
  reserve(keyId: string, limit: number, nowMs: number): Promise<Reservation>;
  current(keyId: string, limit: number, nowMs: number): Promise<QuotaState>;
  monthOf(nowMs: number): MonthWindow;
  /** Refunds not yet written because the database did not answer (retried in the background). */
  pendingRefunds(): number;
  /** Last attempt for pending refunds, at shutdown; returns how many could not be written. */
  flushRefunds(): Promise<number>;
  /** Requests of a key in the `count` months ending with the current one, oldest first. */
  history(keyId: string, nowMs: number, count: number): Promise<MonthUsage[]>;
}

export function createQuotaService(usage: UsageRepository, windows: MonthWindows): QuotaService {
  const refunds = createRefundQueue((keyId, month) => usage.refund(keyId, month));
  return {
    async reserve(keyId, limit, nowMs) {
      const window = windows.at(nowMs);
      const used = await usage.reserve(keyId, window.month, limit);
      if (used === undefined) return { ok: false, state: { limit, used: limit, window, nowMs } };
      return {
        ok: true,
        state: { limit, used, window, nowMs },
        refund: () => refunds.refund(keyId, window.month),
      };
    },
    async current(keyId, limit, nowMs) {
      const window = windows.at(nowMs);
      return { limit, used: await usage.used(keyId, window.month), window, nowMs };
    },
    monthOf: (nowMs) => windows.at(nowMs),
    pendingRefunds: () => refunds.pending(),
    flushRefunds: () => refunds.flush(),
    async history(keyId, nowMs, count) {
      const used = new Map((await usage.forKey(keyId)).map((row) => [row.month, row.used]));
      // Months without a counter row had no requests: the series has no gaps.
      return monthsEndingWith(windows.at(nowMs).month, count).map((month) => ({
        month,
        used: used.get(month) ?? 0,
      }));
    },
  };
}

/** `monthsEndingWith('2026-02', 3)` → `['2025-12', '2026-01', '2026-02']`. */
export function monthsEndingWith(month: string, count: number): string[] {
  const [year = 0, monthNumber = 1] = month.split('-').map(Number);
  const last = year * 12 + (monthNumber - 1);
  const months: string[] = [];
  for (let index = last - count + 1; index <= last; index++) {
    const y = Math.floor(index / 12);
    months.push(`${String(y).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`);
  }
  return months;
}

/** `RateLimit` / `RateLimit-Policy` (IETF draft) and the common `X-RateLimit-*` headers. */
export function rateLimitHeaders(state: QuotaState): Record<string, string> {
  const remaining = Math.max(0, state.limit - state.used);
  const windowSeconds = Math.round((state.window.endMs - state.window.startMs) / 1000);
  const resetSeconds = Math.max(0, Math.ceil((state.window.endMs - state.nowMs) / 1000));
  return {
    'ratelimit-policy': `"monthly";q=${state.limit};w=${windowSeconds}`,
    ratelimit: `"monthly";r=${remaining};t=${resetSeconds}`,
    'x-ratelimit-limit': String(state.limit),
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(Math.floor(state.window.endMs / 1000)),
  };
}
