/**
 * @module quota/refund-queue
 * A refund gives back a reserved request when the core failed. It is written to the same
 * database that may just have failed, so a refund that cannot be written is kept and
 * retried with backoff until the database answers again: otherwise a database outage
 * would charge keys for requests that got no reply.
 */

export interface RefundQueue {
  /**
   * Refunds now, or keeps retrying in the background; never throws. `free`: a hang-up's,
   * refunded only within that many free hang-ups of its minute (see UsageRepository.hangUp).
   */
  refund(keyId: string, month: string, minute?: number, day?: string, free?: number): Promise<void>;
  /** Refunds waiting for the database. */
  pending(): number;
  /** One last attempt for everything pending (at shutdown); returns how many are left. */
  flush(): Promise<number>;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

interface Refund {
  readonly keyId: string;
  readonly month: string;
  /** The clock minute the request was counted in (its per-minute counter). */
  readonly minute: number | undefined;
  /** The day (`YYYY-MM-DD`) the request was counted in (its day's counter). */
  readonly day: string | undefined;
  /** A hang-up's free count (see `refund`); undefined for a plain refund. */
  readonly free: number | undefined;
}

export function createRefundQueue(
  write: (
    keyId: string,
    month: string,
    minute: number | undefined,
    day: string | undefined,
    free: number | undefined,
  ) => Promise<void>,
): RefundQueue {
  const waiting: Refund[] = [];
  let timer: NodeJS.Timeout | undefined;
  let delay = FIRST_RETRY_MS;
  // One drain at a time: two would write the same waiting refund twice.
  let draining: Promise<boolean> | undefined;

  /** Writes waiting refunds in order; false when the database failed again. */
  const drain = (): Promise<boolean> => {
    draining ??= (async () => {
      try {
        while (waiting.length > 0) {
          const next = waiting[0] as Refund;
          try {
            await write(next.keyId, next.month, next.minute, next.day, next.free);
          } catch {
            return false;
          }
          waiting.shift();
        }
        return true;
      } finally {
        draining = undefined;
      }
    })();
    return draining;
  };

  const schedule = () => {
    if (timer) return;
    timer = setTimeout(async () => {
      timer = undefined;
      if (await drain()) {
        delay = FIRST_RETRY_MS;
      } else {
        delay = Math.min(delay * 2, MAX_RETRY_MS);
        schedule();
      }
    }, delay);
    // Pending refunds must not keep a process alive that is otherwise done.
    timer.unref();
  };

  return {
    async refund(keyId, month, minute, day, free) {
      try {
        await write(keyId, month, minute, day, free);
      } catch {
        waiting.push({ keyId, month, minute, day, free });
        schedule();
      }
    },
    pending: () => waiting.length,
    async flush() {
      clearTimeout(timer);
      timer = undefined;
      await draining;
      await drain();
      return waiting.length;
    },
  };
}
