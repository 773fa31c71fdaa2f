import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../../src/core/http/circuit-breaker.js';

function breaker(failures = 3, cooldownMs = 30_000) {
  const clock = { now: 1_000_000 };
  return { clock, breaker: new CircuitBreaker({ failures, cooldownMs }, () => clock.now) };
}

describe('circuit breaker', () => {
  it('stays closed below the consecutive failures, and a success starts the count again', () => {
    const { breaker: b } = breaker(3);
    b.failed();
    b.failed();
    b.succeeded();
    b.failed();
    b.failed();
    expect(b.state).toBe('closed');
    expect(b.acquire()).toBe(true);
  });

  it('opens at the configured failures and says how long until the probe', () => {
    const { clock, breaker: b } = breaker(2, 30_000);
    b.failed();
    b.failed();
    expect(b.state).toBe('open');
    expect(b.acquire()).toBe(false);
    clock.now += 12_000;
    expect(b.waitMs()).toBe(18_000);
  });

  it('lets exactly one probe through after the cooldown; its success closes the breaker', () => {
    const { clock, breaker: b } = breaker(1, 1_000);
    b.failed();
    clock.now += 1_000;
    expect(b.state).toBe('half_open');
    expect(b.acquire()).toBe(true);
    expect(b.acquire()).toBe(false);
    b.succeeded();
    expect(b.state).toBe('closed');
    expect(b.acquire()).toBe(true);
  });

  it('opens again for a whole cooldown when the probe fails', () => {
    const { clock, breaker: b } = breaker(5, 1_000);
    for (let i = 0; i < 5; i++) b.failed();
    clock.now += 1_000;
    expect(b.acquire()).toBe(true);
    b.failed();
    expect(b.state).toBe('open');
    expect(b.waitMs()).toBe(1_000);
  });

  it('a probe that says nothing about the upstream (the client left) frees the way for the next', () => {
    const { clock, breaker: b } = breaker(1, 1_000);
    b.failed();
    clock.now += 1_000;
    expect(b.acquire()).toBe(true);
    b.released();
    expect(b.acquire()).toBe(true);
  });
});
