import { describe, expect, it } from 'vitest';
import { createRefundQueue } from '../../src/quota/refund-queue.js';

describe('the refund queue', () => {
  it('writes at once when the database answers', async () => {
    const written: string[] = [];
    const queue = createRefundQueue(async (key, month) => void written.push(`${key}/${month}`));
    await queue.refund('key_a', '2026-11');
    expect(written).toEqual(['key_a/2026-11']);
    expect(queue.pending()).toBe(0);
  });

  it('keeps failed refunds, in order, and writes each exactly once when the database returns', async () => {
    let up = false;
    const written: string[] = [];
    const queue = createRefundQueue(async (key, month) => {
      if (!up) throw new Error('database down');
      written.push(`${key}/${month}`);
    });
    await queue.refund('key_a', '2026-11');
    await queue.refund('key_b', '2026-11');
    await queue.refund('key_a', '2026-10');
    expect(queue.pending()).toBe(3);
    // Still down after a few retries: nothing written, nothing dropped.
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect(written).toEqual([]);
    expect(queue.pending()).toBe(3);

    up = true;
    const started = Date.now();
    while (queue.pending() > 0 && Date.now() - started < 6000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(written).toEqual(['key_a/2026-11', 'key_b/2026-11', 'key_a/2026-10']);
    expect(queue.pending()).toBe(0);
  });

  it('never writes a refund twice when new failures arrive while it is retrying', async () => {
    let up = false;
    const written: string[] = [];
    const queue = createRefundQueue(async (key) => {
      if (!up) throw new Error('down');
      // Slow writes: the retry is still busy when the next refunds come in.
      await new Promise((resolve) => setTimeout(resolve, 30));
      written.push(key);
    });
    await queue.refund('r1', '2026-11');
    await new Promise((resolve) => setTimeout(resolve, 120));
    up = true;
    await new Promise((resolve) => setTimeout(resolve, 40));
    up = false;
    await queue.refund('r2', '2026-11');
    await queue.refund('r3', '2026-11');
    up = true;
    const started = Date.now();
    while (queue.pending() > 0 && Date.now() - started < 8000) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(written.sort()).toEqual(['r1', 'r2', 'r3']);
  });

  it('flush tries everything once more and reports what is left', async () => {
    let failures = 1;
    const written: string[] = [];
    const queue = createRefundQueue(async (key) => {
      if (failures-- > 0) throw new Error('down');
      written.push(key);
    });
    await queue.refund('key_a', '2026-11');
    expect(queue.pending()).toBe(1);
    expect(await queue.flush()).toBe(0);
    expect(written).toEqual(['key_a']);

    const down = createRefundQueue(async () => {
      throw new Error('down');
    });
    await down.refund('key_b', '2026-11');
    expect(await down.flush()).toBe(1);
  });
});
