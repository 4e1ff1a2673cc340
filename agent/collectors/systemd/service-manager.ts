import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { type BusSignal, busFailure, SystemBus } from './system-bus.ts';

const SYSTEMD = 'org.freedesktop.systemd1';
const MANAGER_PATH = '/org/freedesktop/systemd1';
const MANAGER = 'org.freedesktop.systemd1.Manager';
const PROPERTIES = 'org.freedesktop.DBus.Properties';
const CALL_TIMEOUT_MS = 10_000;
/** systemd's "not set" for a counter it does not keep (no accounting): 2^64 − 1. */
const UNSET = 2n ** 64n - 1n;

/** A unit as ListUnits gives it. */
export interface UnitRow {
  name: string;
  description: string;
  load_state: string;
  active_state: string;
  sub_state: string;
}

/** A unit's properties, as Properties.GetAll gives them: names to values. */
type Properties = Record<string, unknown>;

/** The verbs of a unit change, by the Manager method that makes them. */
export type UnitVerb = 'StartUnit' | 'StopUnit' | 'RestartUnit';

/** `nginx` → `nginx.service`: systemctl's rule, a name without a unit type is a service. */
export function unitName(name: string): string {
  return /\.(service|socket|target|timer|mount|automount|swap|path|slice|scope|device)$/.test(name) ? name : `${name}.service`;
}

function unwrapped(variant: unknown): unknown {
  return variant && typeof variant === 'object' && 'value' in variant ? (variant as { value: unknown }).value : variant;
}

/** A uint64 or uint32 property as a number, null when systemd does not keep it. */
export function counter(value: unknown): number | null {
  if (typeof value === 'bigint') return value === UNSET ? null : Number(value);
  return typeof value === 'number' ? value : null;
}

/** A µs timestamp property as unix ms; null when it never happened (0). */
export function timestampMs(value: unknown): number | null {
  const micros = typeof value === 'bigint' ? Number(value) : typeof value === 'number' ? value : 0;
  return micros > 0 ? Math.floor(micros / 1000) : null;
}

/**
 * systemd's service manager through its own D-Bus API (org.freedesktop.systemd1):
 * lists units, reads one's properties, and starts, stops and restarts units,
 * waiting for the job each change queues (its JobRemoved signal) rather than
 * for a state that may never come.
 */
export class ServiceManager {
  private readonly bus: SystemBus;
  /** Jobs that ended, by object path, kept until their caller reads them (a job may end before its call returns). */
  private readonly endedJobs = new Map<string, string>();
  private readonly jobWaiters = new Map<string, (result: string) => void>();
  private readonly changeListeners = new Set<() => void>();

  constructor(socket: string) {
    this.bus = new SystemBus(socket, {
      onSignal: (signal) => this.signal(signal),
      onConnect: async (bus) => {
        // Signals of units and jobs: JobRemoved ends a change; the others tell the inventory to look again.
        await bus.addMatch(`type='signal',sender='${SYSTEMD}',interface='${MANAGER}'`, CALL_TIMEOUT_MS);
        await bus.addMatch(`type='signal',sender='${SYSTEMD}',interface='${PROPERTIES}',member='PropertiesChanged'`, CALL_TIMEOUT_MS);
        await bus.call({ destination: SYSTEMD, path: MANAGER_PATH, interface: MANAGER, member: 'Subscribe' }, CALL_TIMEOUT_MS);
      },
    });
  }

  /** Tells `listener` whenever a unit may have changed (debounce it: systemd sends many at once). */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  private signal(signal: BusSignal): void {
    if (signal.interface === MANAGER && signal.member === 'JobRemoved') {
      const [, job, , result] = signal.body as [number, string, string, string];
      const waiter = this.jobWaiters.get(job);
      if (waiter) waiter(result);
      else this.endedJobs.set(job, result);
      // Jobs nobody waits for (someone else's) are not kept for long.
      if (this.endedJobs.size > 256) this.endedJobs.delete(this.endedJobs.keys().next().value as string);
    }
    for (const listener of this.changeListeners) listener();
  }

  private manager(member: string, signature: string, body: unknown[]): Promise<unknown[]> {
    return this.bus.call({ destination: SYSTEMD, path: MANAGER_PATH, interface: MANAGER, member, signature, body }, CALL_TIMEOUT_MS);
  }

  /** Whether systemd answers on the bus, and why not. */
  async reachable(): Promise<string | undefined> {
    try {
      await this.manager('GetUnit', 's', ['init.scope']);
      return undefined;
    } catch (error) {
      const failure = busFailure(error, 'systemd');
      // init.scope missing is still systemd answering.
      return failure.code === 'not_found' ? undefined : failure.message;
    }
  }

  /** The loaded units whose names match the patterns (all with none). */
  async list(patterns: string[]): Promise<UnitRow[]> {
    try {
      const [rows] = (await this.manager('ListUnitsByPatterns', 'asas', [[], patterns])) as [unknown[][]];
      return rows.map(([name, description, load, active, sub]) => ({
        name: String(name),
        description: String(description),
        load_state: String(load),
        active_state: String(active),
        sub_state: String(sub),
      }));
    } catch (error) {
      throw busFailure(error, 'listing the units');
    }
  }

  /** A unit's object path, loading it if it is not; not_found when no unit file has the name. */
  private async unitPath(name: string): Promise<string> {
    const [path] = (await this.manager('LoadUnit', 's', [name])) as [string];
    return path;
  }

  /** Every property of one interface of a unit. */
  private async properties(path: string, iface: string): Promise<Properties> {
    const [all] = (await this.bus.call(
      { destination: SYSTEMD, path, interface: PROPERTIES, member: 'GetAll', signature: 's', body: [iface] },
      CALL_TIMEOUT_MS,
    )) as [Record<string, unknown>];
    return Object.fromEntries(Object.entries(all).map(([key, variant]) => [key, unwrapped(variant)]));
  }

  /** A unit's own properties and, for a service, its service's (main PID, cgroup figures, restarts). */
  async read(name: string): Promise<{ unit: Properties; service: Properties }> {
    try {
      const path = await this.unitPath(name);
      const unit = await this.properties(path, 'org.freedesktop.systemd1.Unit');
      if (unit.LoadState === 'not-found') {
        throw new FleetError('not_found', `no unit "${name}" on this host`, { hint: 'service_list lists the units of the host.' });
      }
      const service = name.endsWith('.service') ? await this.properties(path, 'org.freedesktop.systemd1.Service') : {};
      return { unit, service };
    } catch (error) {
      throw busFailure(error, `reading ${name}`);
    }
  }

  /**
   * Queues a start, stop or restart (mode "replace", as systemctl does) and
   * waits for its job to end, at most `waitMs`: the job's result (done, failed,
   * timeout, canceled, dependency, skipped), or `running` when it had not ended.
   */
  async change(verb: UnitVerb, name: string, waitMs: number): Promise<string> {
    const { unit } = await this.read(name);
    if (unit.LoadState === 'masked' && verb !== 'StopUnit') {
      throw new FleetError('conflict', `${name} is masked: systemd will not start it`, { hint: 'An operator unmasks it on the host (systemctl unmask).' });
    }
    let job: string;
    try {
      [job] = (await this.manager(verb, 'ss', [name, 'replace'])) as [string];
    } catch (error) {
      throw busFailure(error, `${verb} ${name}`);
    }
    const ended = this.endedJobs.get(job);
    if (ended !== undefined) {
      this.endedJobs.delete(job);
      return ended;
    }
    return new Promise<string>((resolve) => {
      const timer = setTimeout(() => done('running'), waitMs);
      const done = (result: string) => {
        clearTimeout(timer);
        this.jobWaiters.delete(job);
        resolve(result);
      };
      this.jobWaiters.set(job, done);
    });
  }

  close(): void {
    this.bus.close();
  }
}
