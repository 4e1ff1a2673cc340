type Expire = () => void;

interface DeadlineGroup {
  timer: NodeJS.Timeout;
  expiring: Set<Expire>;
}

/**
 * Timers for call deadlines, one per distinct deadline instant: a fan-out
 * round gives every host the same deadline, so its calls share one timer
 * instead of arming and clearing one per host (a visible part of the broker's
 * CPU per agent per round, docs/performance.md). Each call still expires on
 * its own: the timer runs every callback still waiting at that instant.
 */
export class DeadlineTimers {
  private readonly groups = new Map<number, DeadlineGroup>();

  /** Runs `expire` at `deadlineUnixMs` (at once when it has passed), unless `remove` comes first. */
  add(deadlineUnixMs: number, expire: Expire): void {
    let group = this.groups.get(deadlineUnixMs);
    if (!group) {
      const expiring = new Set<Expire>();
      const timer = setTimeout(
        () => {
          this.groups.delete(deadlineUnixMs);
          for (const callback of expiring) callback();
        },
        Math.max(0, deadlineUnixMs - Date.now()),
      );
      group = { timer, expiring };
      this.groups.set(deadlineUnixMs, group);
    }
    group.expiring.add(expire);
  }

  remove(deadlineUnixMs: number, expire: Expire): void {
    const group = this.groups.get(deadlineUnixMs);
    if (!group?.expiring.delete(expire) || group.expiring.size > 0) return;
    clearTimeout(group.timer);
    this.groups.delete(deadlineUnixMs);
  }
}
