/**
 * Helpers for tests that count per-minute limits on real processes. Their clock is a fake
 * one (libfaketime, see test/reliability/support/fake-clock.ts) that the test sets to the
 * start of a clock minute, so a burst falls inside one minute without waiting for it.
 */

import { chat } from '../helpers/test-server.js';
import { createFakeClock, type FakeClock } from '../reliability/support/fake-clock.js';

export { createFakeClock, type FakeClock };

/** The start of the clock minute after `nowMs`, plus one second (a burst has 59 s). */
export function nextMinute(nowMs: number): number {
  return (Math.floor(nowMs / 60_000) + 1) * 60_000 + 1_000;
}

export interface BurstTally {
  replies: number;
  rateLimited: number;
  other: string[];
}

/**
 * `count` concurrent chat requests with `key`, spread over `urls`; `now` is the servers'
 * clock, and the burst fails if it crosses a minute boundary on it.
 */
export async function burst(
  urls: readonly string[],
  key: string,
  count: number,
  now: () => number = Date.now,
): Promise<BurstTally> {
  const tally: BurstTally = { replies: 0, rateLimited: 0, other: [] };
  const minute = Math.floor(now() / 60_000);
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const res = await chat({ url: urls[i % urls.length] as string }, key, {
        message: `Frage ${i}`,
      });
      if (res.status === 200 && typeof res.json?.reply === 'string' && !res.json.error)
        tally.replies++;
      else if (res.status === 429 && res.json?.error?.code === 'rate_limited') tally.rateLimited++;
      else tally.other.push(`${res.status} ${res.text.slice(0, 100)}`);
    }),
  );
  if (Math.floor(now() / 60_000) !== minute) throw new Error('the burst crossed a minute boundary');
  return tally;
}
