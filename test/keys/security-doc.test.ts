/** SECURITY.md says what the key cache does, with the numbers the code uses. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_KEY_CACHE } from '../../src/keys/key-cache.js';

const SECURITY = readFileSync(new URL('../../SECURITY.md', import.meta.url), 'utf8').replace(
  /\s+/g,
  ' ',
);

describe('SECURITY.md on the key cache', () => {
  it('says keys are remembered, for how long at most and how many', () => {
    expect(SECURITY).not.toMatch(/no key cache/i);
    expect(DEFAULT_KEY_CACHE.ttlMs).toBe(1000);
    expect(SECURITY).toMatch(/each for at most one second/);
    expect(DEFAULT_KEY_CACHE.maxEntries).toBe(10_000);
    expect(SECURITY).toMatch(/at most 10 000/);
  });
});
