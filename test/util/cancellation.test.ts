/**
 * The cancel signal of a turn and its core (src/util/cancellation.ts): what the turn, the
 * cores and undici read of an AbortSignal, without an AbortController.
 */
import { describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/util/cancellation.js';

describe('Cancellation', () => {
  it('calls each listener once, in order, with the reason already set', () => {
    const signal = new Cancellation();
    const seen: string[] = [];
    signal.addEventListener('abort', () => seen.push(`first ${String(signal.reason)}`));
    signal.addEventListener('abort', () => seen.push(`second ${signal.aborted}`));
    expect(signal.aborted).toBe(false);
    expect(signal.reason).toBeUndefined();
    signal.abort('gone');
    signal.abort('again');
    expect(seen).toEqual(['first gone', 'second true']);
    expect(signal.reason).toBe('gone');
  });

  it('does not call a listener that was removed, nor one added after the abort', () => {
    const signal = new Cancellation();
    let calls = 0;
    const listener = () => calls++;
    signal.addEventListener('abort', listener);
    signal.removeEventListener('abort', listener);
    signal.abort(new Error('stop'));
    signal.addEventListener('abort', listener);
    expect(calls).toBe(0);
  });

  it('removes only the listener it is given', () => {
    const signal = new Cancellation();
    const seen: number[] = [];
    const one = () => seen.push(1);
    const two = () => seen.push(2);
    signal.addEventListener('abort', one);
    signal.addEventListener('abort', two);
    signal.removeEventListener('abort', one);
    signal.removeEventListener('abort', one);
    signal.abort(undefined);
    expect(seen).toEqual([2]);
  });
});
