import { statSync } from 'node:fs';
import type { PackagesOptions } from '../../../shared/domains/packages/packages-options.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { Collector, CollectorStatus, Report } from '../collector.ts';
import { findPackageDatabase, type PackageDatabase } from './package-database.ts';
import { registerPackageActions } from './package-handlers.ts';
import { type RunningSystem, readRunningSystem } from './reboot-required.ts';

/** How often the database's modification time is looked at, to report the packages again when it changed. */
const WATCH_MS = 5 * 60_000;

/**
 * The host's packages, from its own package database under the host root (the
 * agent's / on the host, a read-only mount of it in a container). Reads only
 * files the host's package manager wrote; fetches nothing.
 */
export class PackagesCollector implements Collector {
  readonly name = 'packages';
  private watch: NodeJS.Timeout | undefined;
  private reportedMtime = -1;

  constructor(
    private readonly options: PackagesOptions,
    private readonly report: Report,
    private readonly running: () => Promise<RunningSystem> = readRunningSystem,
  ) {}

  private database(): PackageDatabase {
    const db = findPackageDatabase(this.options.hostRoot);
    if (!db) {
      throw new FleetError('collector_unavailable', `no dpkg, rpm or apk package database under ${this.options.hostRoot}`, {
        collector: 'packages',
        hint: "In a container, mount the host's / read-only and pass --host-root.",
      });
    }
    return db;
  }

  async probe(): Promise<CollectorStatus> {
    return findPackageDatabase(this.options.hostRoot)
      ? { available: true, reason: '' }
      : { available: false, absent: true, reason: `no dpkg, rpm or apk package database under ${this.options.hostRoot}` };
  }

  register(dispatcher: Dispatcher): void {
    registerPackageActions(dispatcher, this.options.hostRoot, () => this.database(), this.running);
  }

  async start(): Promise<void> {
    this.watch = setInterval(() => void this.send(false), WATCH_MS);
    this.watch.unref();
  }

  onConnected(): void {
    void this.send(true);
  }

  /** Sends the installed packages when the database changed since the last report, or always (`fresh`). */
  private async send(fresh: boolean): Promise<void> {
    const db = findPackageDatabase(this.options.hostRoot);
    if (!db) return;
    let mtime: number;
    try {
      mtime = statSync(db.path).mtimeMs;
    } catch {
      return;
    }
    if (!fresh && mtime === this.reportedMtime) return;
    try {
      const packages = (await db.read()).map(({ name, version, architecture }) => ({ name, version, architecture }));
      this.reportedMtime = mtime;
      this.report('packages_installed', { ecosystem: db.ecosystem, packages });
    } catch {
      // The actions say why when asked.
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.watch);
  }
}
