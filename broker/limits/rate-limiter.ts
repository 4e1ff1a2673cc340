export interface RateLimit {
  /** Attempts allowed at once, after a quiet spell. */
  burst: number;
  /** Attempts allowed per minute, sustained. */
  perMinute: number;
}

/** Whether an attempt may go ahead, and if not, when the next one would. */
type RateDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/**
 * A token bucket per key (a source address, a join token id, an identity).
 * Memory stays bounded whatever keys an attacker invents: a full bucket is
 * the same as no bucket, so full ones are dropped, and past `maxKeys` the
 * oldest key is forgotten (which only ever lets that key start afresh).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limit: RateLimit,
    private readonly maxKeys = 10_000,
  ) {}

  /** The attempts `key` has left now. */
  private tokens(key: string, nowMs: number): number {
    const bucket = this.buckets.get(key);
    return bucket ? Math.min(this.limit.burst, bucket.tokens + (nowMs - bucket.updatedMs) / (60_000 / this.limit.perMinute)) : this.limit.burst;
  }

  /** Whether an attempt for `key` would be allowed now; nothing is counted. */
  allows(key: string, nowMs = Date.now()): boolean {
    return this.tokens(key, nowMs) >= 1;
  }

  /** Counts one attempt for `key` when it is allowed; a refused attempt costs nothing. */
  take(key: string, nowMs = Date.now()): RateDecision {
    const msPerToken = 60_000 / this.limit.perMinute;
    const bucket = this.buckets.get(key);
    const tokens = this.tokens(key, nowMs);
    if (tokens < 1) {
      if (bucket) {
        bucket.tokens = tokens;
        bucket.updatedMs = nowMs;
      }
      return { allowed: false, retryAfterMs: Math.ceil((1 - tokens) * msPerToken) };
    }
    this.buckets.delete(key);
    this.buckets.set(key, { tokens: tokens - 1, updatedMs: nowMs });
    if (this.buckets.size > this.maxKeys) this.forgetFull(nowMs);
    return { allowed: true };
  }

  private forgetFull(nowMs: number): void {
    const msPerToken = 60_000 / this.limit.perMinute;
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (nowMs - bucket.updatedMs) / msPerToken >= this.limit.burst) this.buckets.delete(key);
    }
    // Oldest first: Map keeps insertion order, and take() re-inserts a key on use.
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= this.maxKeys) break;
      this.buckets.delete(key);
    }
  }
}
