import type { ServiceInventory } from '../../../shared/domains/systemd/service-inventory.ts';
import type { Report } from '../collector.ts';
import { type ServiceManager, timestampMs } from './service-manager.ts';

/** systemd signals come in bursts (a restart changes several properties of several units): one look after them. */
const SETTLE_MS = 1_000;
/** A look this often anyway, for what signals did not say (a bus reconnected, a signal lost). */
const POLL_MS = 60_000;

/**
 * Keeps the broker's index of the host's services current: lists them when
 * the stream comes up, and again after systemd signals a change or a minute
 * passes, sending the `systemd_services` report only when a state changed.
 */
export class ServiceWatch {
  private last = '';
  private settle: NodeJS.Timeout | undefined;
  private poll: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private looking: Promise<void> = Promise.resolve();

  constructor(
    private readonly manager: ServiceManager,
    private readonly report: Report,
    private readonly pollMs = POLL_MS,
  ) {}

  start(): void {
    this.unsubscribe = this.manager.onChange(() => {
      this.settle ??= setTimeout(() => {
        this.settle = undefined;
        this.look(false);
      }, SETTLE_MS);
    });
    this.poll = setInterval(() => this.look(false), this.pollMs);
    this.poll.unref();
  }

  /** Lists the services; sends them when they changed, or always (`fresh`: a broker that just connected). */
  look(fresh: boolean): Promise<void> {
    this.looking = this.looking.then(async () => {
      let units: ServiceInventory['units'];
      try {
        const rows = await this.manager.list(['*.service']);
        units = rows.map((row) => ({
          name: row.name,
          description: row.description,
          active_state: row.active_state,
          sub_state: row.sub_state,
          since_unix_ms: null,
        }));
      } catch {
        // No systemd here (or not now): nothing to tell.
        return;
      }
      const failed = units.filter((unit) => unit.active_state === 'failed');
      // When a failed unit failed is worth a read of its own: a few per host.
      for (const unit of failed.slice(0, 20)) {
        try {
          unit.since_unix_ms = timestampMs((await this.manager.read(unit.name)).unit.StateChangeTimestamp);
        } catch {
          // gone meanwhile
        }
      }
      const key = JSON.stringify(units.map((unit) => [unit.name, unit.active_state, unit.sub_state]));
      if (!fresh && key === this.last) return;
      this.last = key;
      this.report('systemd_services', { units });
    });
    return this.looking;
  }

  stop(): void {
    this.unsubscribe?.();
    clearTimeout(this.settle);
    clearInterval(this.poll);
  }
}
