/** How far behind the newest sequence number a late message is still taken. */
const WINDOW = 4096;

/**
 * The sequence numbers seen from one sender key: a number seen before, or one
 * further behind the newest than the window reaches, is a replay. A sender's
 * messages reach a broker in the order it sent them (one NATS connection to
 * another), so only gaps are expected (subjects this broker does not hear),
 * never a message thousands behind.
 */
export class ReplayWindow {
  private newest = -1;
  private readonly seen = new Uint8Array(WINDOW);

  /** Whether `seq` is new; it is remembered either way. */
  accept(seq: number): boolean {
    if (seq > this.newest) {
      const from = Math.max(this.newest + 1, seq - WINDOW + 1);
      for (let n = from; n < seq; n++) this.seen[n % WINDOW] = 0;
      this.seen[seq % WINDOW] = 1;
      this.newest = seq;
      return true;
    }
    if (seq <= this.newest - WINDOW) return false;
    if (this.seen[seq % WINDOW]) return false;
    this.seen[seq % WINDOW] = 1;
    return true;
  }
}
