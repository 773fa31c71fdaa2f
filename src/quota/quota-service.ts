/**
 * @module quota/quota-service
 * Monthly quota per key: reserve one request atomically before the core runs, refund it
 * when the core fails. The month is always the one the request was admitted in.
 */
import type { UsageRepository } from '../storage/repositories/usage-repository.js';
import type { MonthWindow, MonthWindows } from './month-window.js';

export interface QuotaState {
  readonly limit: number;
  readonly used: number;
  readonly window: MonthWindow;
  readonly nowMs: number;
}

export type Reservation =
  | { readonly ok: true; readonly state: QuotaState; refund(): Promise<void> }
  | { readonly ok: false; readonly state: QuotaState };

export interface QuotaService {
  reserve(keyId: string, limit: number, nowMs: number): Promise<Reservation>;
  current(keyId: string, limit: number, nowMs: number): Promise<QuotaState>;
  monthOf(nowMs: number): MonthWindow;
}

export function createQuotaService(usage: UsageRepository, windows: MonthWindows): QuotaService {
  return {
    async reserve(keyId, limit, nowMs) {
      const window = windows.at(nowMs);
      const used = await usage.reserve(keyId, window.month, limit);
      if (used === undefined) return { ok: false, state: { limit, used: limit, window, nowMs } };
      return {
        ok: true,
        state: { limit, used, window, nowMs },
        refund: () => usage.refund(keyId, window.month),
      };
    },
    async current(keyId, limit, nowMs) {
      const window = windows.at(nowMs);
      return { limit, used: await usage.used(keyId, window.month), window, nowMs };
    },
    monthOf: (nowMs) => windows.at(nowMs),
  };
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
