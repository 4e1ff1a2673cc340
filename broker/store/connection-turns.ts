import { FleetError } from '../../shared/errors/fleet-error.ts';

interface Waiter {
  go: () => void;
  timer: NodeJS.Timeout;
  /** It gave up waiting: the turn goes to the next one. */
  gone: boolean;
  /** It went before those that waited already. */
  ahead: boolean;
}

/**
 * The turns of a fixed number of store connections, given first come first
 * served, each waiter for at most `maxWaitMs`.
 *
 * The `pg` pool has one clock for two things: opening a connection to the
 * server, and waiting for a connection the pool's other users hold. When
 * thousands of agents connect at once (a broker's restart, a cluster's
 * start), each asks the store a few questions, and the pool's own queue ran
 * past its 5 s: every stream was refused and dialed again, which asked
 * the store more. Waiting here leaves the pool's clock to a server that does
 * not answer.
 */
export class ConnectionTurns {
  private free: number;
  private readonly waiting: Waiter[] = [];
  /** Where the queue starts in `waiting`: taken from the front without moving the rest. */
  private head = 0;

  constructor(
    readonly size: number,
    private readonly maxWaitMs: number,
    private readonly what: string,
  ) {
    this.free = size;
  }

  /** Callers waiting for a turn (those that gave up included until their place comes). */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  /**
   * Resolves once one of the connections is this caller's; `give` hands it on.
   * `ahead`: before those waiting (after any others that went ahead).
   */
  take(ahead = false): Promise<void> {
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        go: resolve,
        gone: false,
        ahead,
        timer: setTimeout(() => {
          // Left where it stands in the queue; `give` skips it.
          waiter.gone = true;
          reject(
            new FleetError('unavailable', `${this.what} is busy: a statement waited ${this.maxWaitMs / 1000} s for one of its ${this.size} connections`, {
              hint: 'Try again in a moment; if it lasts, the store server is overloaded or its connections are held by long statements.',
            }),
          );
        }, this.maxWaitMs),
      };
      if (!ahead) this.waiting.push(waiter);
      else {
        let at = this.head;
        while (at < this.waiting.length && (this.waiting[at] as Waiter).ahead) at += 1;
        this.waiting.splice(at, 0, waiter);
      }
    });
  }

  give(): void {
    while (this.head < this.waiting.length) {
      const next = this.waiting[this.head] as Waiter;
      this.head += 1;
      if (this.head === this.waiting.length || (this.head > 1024 && this.head * 2 > this.waiting.length)) {
        this.waiting.splice(0, this.head);
        this.head = 0;
      }
      if (next.gone) continue;
      clearTimeout(next.timer);
      next.go();
      return;
    }
    this.free += 1;
  }

  /** Runs `work` on a turn of its own, `ahead` of those waiting or not. */
  async with<T>(work: () => Promise<T>, ahead = false): Promise<T> {
    await this.take(ahead);
    try {
      return await work();
    } finally {
      this.give();
    }
  }
}
