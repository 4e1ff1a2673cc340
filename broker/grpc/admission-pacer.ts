export interface AdmissionRate {
  /** Agent connections taken on at once after a quiet spell. */
  burst: number;
  /** Agent connections taken on per second, sustained. */
  perSecond: number;
}

/**
 * Decides whose turn it is to begin TLS at the agents' port. Connections wait
 * in one line per source address, and turns go round the sources: one
 * connection of each source in turn, each source's in the order they came.
 * Turns come at the admission rate, `burst` at once after a quiet spell and
 * `perSecond` after that. A connection that leaves its line (its socket
 * closed) gives its turn up, so nothing is spent on it. A source that dials a
 * thousand times thus waits behind itself, and the agent that dials once from
 * elsewhere is taken on within a turn or two.
 */
export class AdmissionPacer<T> {
  /** Waiting connections by source; the source first in the map has the next turn. */
  private readonly lines = new Map<string, T[]>();
  private tokens: number;
  private updatedMs: number;
  private count = 0;

  constructor(
    private readonly rate: AdmissionRate,
    nowMs = Date.now(),
  ) {
    this.tokens = rate.burst;
    this.updatedMs = nowMs;
  }

  /** Connections waiting for their turn. */
  get waiting(): number {
    return this.count;
  }

  /** Puts a connection at the end of its source's line; the first to wait after a quiet spell finds at most a burst. */
  enqueue(source: string, item: T, nowMs = Date.now()): void {
    if (this.count === 0) this.earn(nowMs, this.rate.burst);
    const line = this.lines.get(source);
    if (line) line.push(item);
    else this.lines.set(source, [item]);
    this.count += 1;
  }

  /** Takes a connection out of its line before its turn came; false when it was not waiting. */
  withdraw(source: string, item: T): boolean {
    const line = this.lines.get(source);
    const at = line?.indexOf(item) ?? -1;
    if (!line || at < 0) return false;
    line.splice(at, 1);
    if (line.length === 0) this.lines.delete(source);
    this.count -= 1;
    return true;
  }

  /**
   * The connections whose turn has come by `nowMs`, round the sources, `max`
   * at most, and in how many milliseconds the next turn comes (undefined when
   * nobody waits).
   */
  due(nowMs = Date.now(), max = Number.POSITIVE_INFINITY): { due: T[]; nextInMs: number | undefined } {
    // Connections waited all along (the first of them brought the count up to date): turns a busy event loop
    // came to late are all owed. Capped at the burst, a loop turning every 5 s gave 100 turns a turn, 20 a second.
    this.earn(nowMs, this.count > 0 ? Number.POSITIVE_INFINITY : this.rate.burst);
    const due: T[] = [];
    while (this.tokens >= 1 && due.length < max) {
      const next = this.lines.entries().next();
      if (next.done) break;
      const [source, line] = next.value;
      const item = line.shift() as T;
      // The source goes to the back of the round, or leaves it when its line is empty.
      this.lines.delete(source);
      if (line.length > 0) this.lines.set(source, line);
      this.count -= 1;
      this.tokens -= 1;
      due.push(item);
    }
    const nextInMs = this.count > 0 ? Math.max(1, Math.ceil(((1 - this.tokens) * 1000) / this.rate.perSecond)) : undefined;
    return { due, nextInMs };
  }

  /** Adds the turns earned since the last count, keeping at most `ceiling` (and always the burst). */
  private earn(nowMs: number, ceiling: number): void {
    const earned = ((nowMs - this.updatedMs) * this.rate.perSecond) / 1000;
    this.tokens = Math.min(Math.max(ceiling, this.rate.burst), this.tokens + earned);
    this.updatedMs = nowMs;
  }
}

/**
 * The waits to give `count` agents told to leave at once (a broker shutting
 * down): spread evenly over the time `rate` needs to take them all back.
 */
export function spreadReturns(count: number, rate: AdmissionRate, random: () => number = Math.random): number[] {
  const windowMs = (count / rate.perSecond) * 1000;
  return Array.from({ length: count }, () => Math.floor(random() * windowMs));
}
