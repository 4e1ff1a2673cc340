/**
 * Turns the stream of a task's progress into few status changes: the first
 * one at once, then at most one per interval, always the latest. A fan-out
 * over 500 hosts settles 500 times; its owner hears of it about once a
 * second, and the store is written as often.
 */
export class TaskStatusPump {
  private latest: string | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly intervalMs: number,
    private readonly publish: (statusMessage: string) => void,
  ) {}

  push(statusMessage: string): void {
    this.latest = statusMessage;
    if (this.timer === undefined) this.flush();
  }

  /** Drops what is pending: the task's end, which follows, says more. */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.latest = undefined;
  }

  private flush(): void {
    const message = this.latest;
    this.latest = undefined;
    if (message === undefined) {
      this.timer = undefined;
      return;
    }
    this.publish(message);
    this.timer = setTimeout(() => this.flush(), this.intervalMs);
    this.timer.unref();
  }
}
