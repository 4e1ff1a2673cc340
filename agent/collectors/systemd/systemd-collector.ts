import { existsSync } from 'node:fs';
import type { SystemdOptions } from '../../../shared/domains/systemd/systemd-options.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { Collector, CollectorStatus, Report } from '../collector.ts';
import { registerJournalActions } from './journal-query.ts';
import { JournalReader } from './journal-reader.ts';
import { registerServiceActions } from './service-handlers.ts';
import { ServiceManager } from './service-manager.ts';
import { ServiceWatch } from './service-watch.ts';

/** A change answers this long before its deadline, so the answer reaches the broker in time. */
const ANSWER_MARGIN_MS = 2_000;

/**
 * The host's systemd: its journal through journalctl, its units through the
 * service manager's D-Bus API. Available when either answers; each tool of the
 * other half says why it cannot (absent, as collector_unavailable).
 */
export class SystemdCollector implements Collector {
  readonly name = 'systemd';
  private readonly journal: JournalReader;
  private readonly manager: ServiceManager;
  private readonly watch: ServiceWatch;
  private readonly busSocket: string;

  constructor(options: SystemdOptions, report: Report) {
    this.busSocket = options.systemBusSocket;
    this.journal = new JournalReader({ journalctl: options.journalctl, journalDir: options.journalDir });
    this.manager = new ServiceManager(options.systemBusSocket);
    this.watch = new ServiceWatch(this.manager, report);
  }

  async probe(): Promise<CollectorStatus> {
    const journal = this.journal.absence();
    const services = await this.manager.reachable();
    // Neither a journal nor a system bus socket on this host: systemd is not there (absent); a socket that refuses is a failure.
    if (journal && services) return { available: false, absent: !existsSync(this.busSocket), reason: `${journal}; ${services}` };
    return { available: true, reason: '' };
  }

  register(dispatcher: Dispatcher): void {
    registerJournalActions(dispatcher, this.journal);
    registerServiceActions(dispatcher, this.manager, this.journal, (deadline) => Math.max(0, deadline - Date.now() - ANSWER_MARGIN_MS));
  }

  async start(): Promise<void> {
    this.watch.start();
  }

  onConnected(): void {
    void this.watch.look(true);
  }

  async stop(): Promise<void> {
    this.watch.stop();
    this.manager.close();
  }
}
