/**
 * A call that has told its caller nothing for this long sends a progress
 * notification saying it still runs (when the caller asked for progress):
 * under the SDK client's default request timeout of 60 s, so a client that
 * resets its timeout on progress keeps waiting for a change that waits longer.
 */
export const STILL_RUNNING_PROGRESS_MS = 50_000;

/** Sends one progress notification of a request. */
export type SendProgress = (progress: number, total: number | undefined, message: string) => void;

/**
 * The progress notifications of one call answered in its request, for a
 * caller that asked for them: what the call reports, passed on, and, once it
 * has said nothing for `stillRunningMs`, a notification that it still runs.
 * A client that resets its request timeout on progress (the SDK's
 * `resetTimeoutOnProgress`) then keeps waiting for a change that waits past
 * its timeout. MCP wants the value to grow with each notification: a repeated
 * or smaller one is raised halfway to the next whole step (the next host
 * settling), so a host that settles later still counts as more.
 */
export class RequestProgress {
  private last = 0;
  private sentAny = false;
  private total: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly startedMs = Date.now();

  constructor(
    private readonly send: SendProgress,
    private readonly stillRunningMs: number,
  ) {
    this.arm();
  }

  /** What the call reports: `progress` of `total`, and what just happened. */
  readonly report = (progress: number, total: number, message: string): void => {
    this.total = total;
    this.emit(progress, message);
  };

  /** Something the caller should hear without a step done (what the call waits for): sent as a progress notification all the same. */
  readonly say = (message: string): void => {
    this.emit(this.last, message);
  };

  /** The call is over: nothing more is sent. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.emit(this.last, `still running after ${Math.round((Date.now() - this.startedMs) / 1000)} s`);
    }, this.stillRunningMs);
    this.timer.unref();
  }

  private emit(wanted: number, message: string): void {
    if (this.stopped) return;
    // The first value goes out as it is (a call starts at 0); later ones must grow.
    const value = !this.sentAny || wanted > this.last ? wanted : this.raised();
    if (!this.sentAny || value > this.last) {
      this.sentAny = true;
      this.last = value;
      this.send(value, this.total, message);
    }
    this.arm();
  }

  /** Halfway from the last value sent to the next whole step, never past the total (at the total, nothing is left to count). */
  private raised(): number {
    const ceiling = Math.min(Math.floor(this.last) + 1, this.total ?? Number.POSITIVE_INFINITY);
    return ceiling > this.last ? this.last + (ceiling - this.last) / 2 : this.last;
  }
}
