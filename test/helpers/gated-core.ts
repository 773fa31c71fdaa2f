/**
 * A core whose replies the test releases (or fails) one by one, to hold turns in flight on
 * purpose. Like a real adapter, a call ends when its signal aborts.
 */
import { type CoreAdapter, CoreError, type CoreRequest } from '../../src/core/core-adapter.js';

export interface GatedCall {
  readonly request: CoreRequest;
  /** Settled: released, failed or aborted. */
  readonly settled: boolean;
  release(reply?: string): void;
  fail(error?: unknown): void;
}

export interface GatedCore extends CoreAdapter {
  /** Every call so far, in order. */
  readonly calls: readonly GatedCall[];
  /** Resolves once `count` calls have been made. */
  waitForCalls(count: number): Promise<void>;
  /** Resolves once the call's signal has aborted. */
  waitForAbort(call: GatedCall): Promise<void>;
}

export function createGatedCore(): GatedCore {
  const calls: GatedCall[] = [];
  const waiters: { count: number; done: () => void }[] = [];
  return {
    name: 'gated',
    calls,
    reply(request) {
      return new Promise<string>((resolve, reject) => {
        let settled = false;
        const settle = (fn: () => void) => {
          if (settled) return;
          settled = true;
          fn();
        };
        const call: GatedCall = {
          request,
          get settled() {
            return settled;
          },
          release: (reply = `reply to: ${request.message}`) => settle(() => resolve(reply)),
          fail: (error = new CoreError('core_unavailable', 'failed on purpose')) =>
            settle(() => reject(error)),
        };
        request.signal.addEventListener('abort', () =>
          settle(() => reject(new CoreError('core_timeout', 'aborted'))),
        );
        calls.push(call);
        for (const waiter of waiters.filter((w) => calls.length >= w.count)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.done();
        }
      });
    },
    waitForCalls(count) {
      if (calls.length >= count) return Promise.resolve();
      return new Promise((done) => waiters.push({ count, done }));
    },
    waitForAbort(call) {
      const { signal } = call.request;
      if (signal.aborted) return Promise.resolve();
      return new Promise((done) => signal.addEventListener('abort', () => done(), { once: true }));
    },
  };
}
