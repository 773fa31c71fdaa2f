/**
 * The service stopping, as turns waiting for their core hear of it: every turn still
 * watching is told once, oldest first; a turn that stopped watching is not told; nothing
 * is told twice. (What a stop does to the turns over HTTP: test/ops/shutdown.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { createStopping } from '../../src/chat/run-core.js';

describe('the stopping signal', () => {
  it('tells every turn still watching, once, oldest first', () => {
    const stopping = createStopping();
    const told: string[] = [];
    stopping.watch(() => told.push('a'));
    stopping.watch(() => told.push('b'));
    stopping.watch(() => told.push('c'));
    expect(stopping.stopped).toBe(false);
    stopping.stop();
    stopping.stop();
    expect(stopping.stopped).toBe(true);
    expect(told).toEqual(['a', 'b', 'c']);
  });

  it('does not tell turns that stopped watching, wherever they were in the list', () => {
    const stopping = createStopping();
    const told: string[] = [];
    const unwatch = ['a', 'b', 'c', 'd', 'e'].map((name) => stopping.watch(() => told.push(name)));
    unwatch[4]?.(); // the newest
    unwatch[0]?.(); // the oldest
    unwatch[2]?.(); // one in the middle
    unwatch[2]?.(); // twice changes nothing
    stopping.stop();
    expect(told).toEqual(['b', 'd']);
  });

  it('keeps working after every turn stopped watching, and stopping after a stop is harmless', () => {
    const stopping = createStopping();
    const told: string[] = [];
    stopping.watch(() => told.push('gone'))();
    const unwatch = stopping.watch(() => told.push('late'));
    stopping.stop();
    unwatch();
    expect(told).toEqual(['late']);
  });
});
