import type { Logger } from '../../../shared/log/logger.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { EngineClient } from '../../engine/engine-client.ts';
import { EventFollower } from '../../engine/event-follower.ts';
import type { Collector, CollectorStatus, Report } from '../collector.ts';
import { RestartWatcher } from './restart-watcher.ts';
import { registerWatchAdd } from './watch-add.ts';
import { registerWatchCheck } from './watch-check.ts';
import { registerWatchHistory } from './watch-history.ts';
import { registerWatchList } from './watch-list.ts';
import { registerWatchRemove } from './watch-remove.ts';
import type { WatchContext } from './watch-status.ts';
import { WatchStore } from './watch-store.ts';

interface WatchCollectorOptions {
  /** Container events say when to look; a look inspects the container and reads its logs. */
  docker: Pick<EngineClient, 'getEvents' | 'getContainer'>;
  /** Where watches and incidents are kept across restarts; undefined keeps them in memory. */
  dataDir: string | undefined;
  log: Logger;
  /** Sends each incident to the broker as a `watch_incident` report. */
  report?: Report;
  /** How long after a restart to wait for the new run's first log lines (default 1.5 s). */
  afterLogsMs?: number;
}

/**
 * Restart detection for watched containers. The collector follows the
 * engine's container events for as long as the agent runs, so a restart
 * becomes an incident when it happens, not when someone asks; at start it
 * also compares every watch with the run it last saw, so a restart while the
 * agent was away is recorded too. It is always available: a target it cannot
 * read answers `skipped` with the reason.
 */
export class WatchCollector implements Collector {
  readonly name = 'watch';
  private readonly store: WatchStore;
  private readonly watcher: RestartWatcher;
  private readonly events: EventFollower;
  private readonly stopController = new AbortController();

  constructor(options: WatchCollectorOptions) {
    this.store = new WatchStore(options.dataDir);
    this.watcher = new RestartWatcher({
      docker: options.docker,
      store: this.store,
      log: options.log,
      ...(options.report ? { report: options.report } : {}),
      afterLogsMs: options.afterLogsMs ?? 1500,
      signal: this.stopController.signal,
    });
    this.events = new EventFollower(options.docker, ['container'], (event) => this.watcher.onEvent(event), options.log);
  }

  async probe(): Promise<CollectorStatus> {
    return { available: true, reason: '' };
  }

  async start(): Promise<void> {
    this.events.start();
    for (const watch of this.store.list()) {
      if (watch.runner === 'docker') void this.watcher.inTurn(watch.container, () => this.watcher.observe(watch.container, false)).catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    await this.events.stop();
  }

  register(dispatcher: Dispatcher): void {
    const context: WatchContext = { store: this.store, watcher: this.watcher };
    registerWatchList(dispatcher, context);
    registerWatchAdd(dispatcher, context);
    registerWatchRemove(dispatcher, context);
    registerWatchCheck(dispatcher, context);
    registerWatchHistory(dispatcher, context);
  }
}
