import { describe, expect, it } from 'vitest';
import { RateLimiter } from './rate-limiter.ts';

describe('RateLimiter', () => {
  it('allows a burst, then refuses with the time until the next attempt, then refills', () => {
    const limiter = new RateLimiter({ burst: 2, perMinute: 6 });
    expect(limiter.take('a', 0)).toEqual({ allowed: true });
    expect(limiter.take('a', 0)).toEqual({ allowed: true });
    expect(limiter.take('a', 0)).toEqual({ allowed: false, retryAfterMs: 10_000 });
    expect(limiter.take('b', 0)).toEqual({ allowed: true });
    expect(limiter.take('a', 4_000)).toEqual({ allowed: false, retryAfterMs: 6_000 });
    expect(limiter.take('a', 10_000)).toEqual({ allowed: true });
    expect(limiter.take('a', 10_000).allowed).toBe(false);
  });

  it('tells whether a key has an attempt left without counting one', () => {
    const limiter = new RateLimiter({ burst: 1, perMinute: 6 });
    expect(limiter.allows('a', 0)).toBe(true);
    expect(limiter.allows('a', 0)).toBe(true);
    limiter.take('a', 0);
    expect(limiter.allows('a', 0)).toBe(false);
    expect(limiter.allows('a', 10_000)).toBe(true);
  });

  it('keeps a bounded number of keys, forgetting the oldest', () => {
    const limiter = new RateLimiter({ burst: 1, perMinute: 1 }, 2);
    expect(limiter.take('a', 0).allowed).toBe(true);
    expect(limiter.take('b', 0).allowed).toBe(true);
    expect(limiter.take('c', 0).allowed).toBe(true);
    // "a" was forgotten, so it starts afresh; "c" is still remembered.
    expect(limiter.take('a', 0).allowed).toBe(true);
    expect(limiter.take('c', 0).allowed).toBe(false);
  });
});
