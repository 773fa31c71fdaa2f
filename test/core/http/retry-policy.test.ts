import { describe, expect, it } from 'vitest';
import {
  isRetryableStatus,
  parseRetryAfterMs,
  retryDelayMs,
  sleep,
} from '../../../src/core/http/retry-policy.js';

describe('retry policy', () => {
  it('retries 408, 429 and 5xx only', () => {
    expect([408, 429, 500, 503, 599].every(isRetryableStatus)).toBe(true);
    expect([200, 301, 400, 401, 403, 404, 409, 422].some(isRetryableStatus)).toBe(false);
  });

  it('draws full-jitter waits below base * 2^(retry-1), capped at the maximum', () => {
    expect(retryDelayMs(1, 100, 10_000, undefined, () => 0.999)).toBe(99);
    expect(retryDelayMs(3, 100, 10_000, undefined, () => 0.5)).toBe(200);
    expect(retryDelayMs(10, 100, 1_000, undefined, () => 0.999)).toBe(999);
    expect(retryDelayMs(2, 100, 1_000, undefined, () => 0)).toBe(0);
  });

  it('uses Retry-After instead of jitter but never beyond the maximum', () => {
    expect(retryDelayMs(1, 100, 5_000, 2_000)).toBe(2_000);
    expect(retryDelayMs(1, 100, 5_000, 60_000)).toBe(5_000);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfterMs('3', now)).toBe(3_000);
    expect(parseRetryAfterMs(' 1.5 ', now)).toBe(1_500);
    expect(parseRetryAfterMs('Thu, 01 Jan 2026 00:00:10 GMT', now)).toBe(10_000);
    expect(parseRetryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfterMs(undefined, now)).toBeUndefined();
    expect(parseRetryAfterMs('soon', now)).toBeUndefined();
    expect(parseRetryAfterMs('-5', now)).toBeUndefined();
  });

  it('sleep resolves false as soon as the signal aborts', async () => {
    const controller = new AbortController();
    const pending = sleep(10_000, controller.signal);
    controller.abort();
    await expect(pending).resolves.toBe(false);
    await expect(sleep(1, new AbortController().signal)).resolves.toBe(true);
  });
});
