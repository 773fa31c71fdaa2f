/**
 * @module quota/refund-queue
 * A refund gives back a reserved request when the core failed. It is written to the same
 * database that may just have failed, so a refund that cannot be written is kept and
 * retried with backoff until the database answers again: otherwise a database outage
 * would charge keys for requests that got no reply.
 */

export interface RefundQueue {
  /** Refunds now, or keeps retrying in the background; never throws. */
  refund(keyId: string, month: string): Promise<void>;
  /** Refunds waiting for the database. */
  pending(): number;
  /** One last attempt for everything pending (at shutdown); returns how many are left. */
  flush(): Promise<number>;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

export function createRefundQueue(write: (keyId: string, month: string) => Promise<void>): RefundQueue {
  const waiting: { keyId: string; month: string }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let delay = FIRST_RETRY_MS;

  const retry = async () => {
    timer = undefined;
    while (waiting.length > 0) {
      const next = waiting[0] as { keyId: string; month: string };
      try {
        await write(next.keyId, next.month);
      } catch {
        delay = Math.min(delay * 2, MAX_RETRY_MS);
        schedule();
        return;
      }
      waiting.shift();
    }
    delay = FIRST_RETRY_MS;
  };
  const schedule = () => {
    timer ??= setTimeout(() => void retry(), delay);
    // Pending refunds must not keep a process alive that is otherwise done.
    timer.unref();
  };

  return {
    async refund(keyId, month) {
      try {
        await write(keyId, month);
      } catch {
        waiting.push({ keyId, month });
        schedule();
      }
    },
    pending: () => waiting.length,
    async flush() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (const item of waiting.splice(0)) {
        try {
          await write(item.keyId, item.month);
        } catch {
          waiting.push(item);
        }
      }
      return waiting.length;
    },
  };
}
