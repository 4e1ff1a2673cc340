export interface AdmissionRate {
  /** Agent connections taken on at once after a quiet spell. */
  burst: number;
  /** Agent connections taken on per second, sustained. */
  perSecond: number;
}

/**
 * Paces the agents a broker takes on: `burst` at once after a quiet spell and
 * `perSecond` after that, each arrival past the burst given the next free slot
 * (one admission interval after the slot promised before it). A promised slot
 * is spent when it is promised: the connection waits for it and is not paced
 * again, so a fleet that arrives in one second is taken on, in the order it
 * came, over `fleet / perSecond` seconds, and a newcomer never jumps the queue.
 */
export class AdmissionPacer {
  /** When the slots promised so far, past the burst allowance, run out. */
  private slotsUntilMs: number;

  constructor(
    private readonly rate: AdmissionRate,
    nowMs = Date.now(),
  ) {
    this.slotsUntilMs = nowMs;
  }

  private get intervalMs(): number {
    return 1000 / this.rate.perSecond;
  }

  /**
   * 0 when the connection may go ahead now, else in how many milliseconds its
   * slot comes; undefined when that would be later than `maxWaitMs`, and then
   * no slot is taken.
   */
  admit(nowMs = Date.now(), maxWaitMs = Number.POSITIVE_INFINITY): number | undefined {
    const next = Math.max(this.slotsUntilMs, nowMs);
    const waitMs = Math.max(0, Math.ceil(next - nowMs - (this.rate.burst - 1) * this.intervalMs));
    if (waitMs > maxWaitMs) return undefined;
    this.slotsUntilMs = next + this.intervalMs;
    return waitMs;
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
