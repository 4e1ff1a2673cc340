export interface AdmissionRate {
  /** Agent streams admitted at once after a quiet spell. */
  burst: number;
  /** Agent streams admitted per second, sustained. */
  perSecond: number;
}

/**
 * Paces the agents a broker takes on: a token bucket admits `burst` at once and
 * `perSecond` after that, and every agent past it is given a slot of its own
 * later on, one slot per admission interval after those already promised, so
 * a fleet that arrives in one second is told to come back spread over
 * `fleet / perSecond` seconds rather than dropped and left to retry together.
 */
export class AdmissionPacer {
  private tokens: number;
  private updatedMs: number;
  /** The latest return time promised to an agent told to come back. */
  private promisedUntilMs = 0;

  constructor(
    private readonly rate: AdmissionRate,
    nowMs = Date.now(),
  ) {
    this.tokens = rate.burst;
    this.updatedMs = nowMs;
  }

  /** 0 when the agent may go ahead now, else in how many milliseconds it should come back. */
  admit(nowMs = Date.now(), random: () => number = Math.random): number {
    const intervalMs = 1000 / this.rate.perSecond;
    this.tokens = Math.min(this.rate.burst, this.tokens + (nowMs - this.updatedMs) / intervalMs);
    this.updatedMs = nowMs;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    this.promisedUntilMs = Math.max(this.promisedUntilMs, nowMs) + intervalMs;
    // Jitter within the slot, so agents given neighbouring slots do not land on the same millisecond.
    return Math.ceil(this.promisedUntilMs - nowMs + random() * intervalMs);
  }

  /**
   * The waits to give `count` agents told to leave at once (a broker shutting
   * down): spread evenly over the time this rate needs to take them all back.
   */
  spread(count: number, random: () => number = Math.random): number[] {
    const windowMs = (count / this.rate.perSecond) * 1000;
    return Array.from({ length: count }, () => Math.floor(random() * windowMs));
  }
}
