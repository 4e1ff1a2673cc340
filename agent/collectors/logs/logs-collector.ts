import type { LogsOptions } from '../../../shared/domains/logs/logs-options.ts';
import { pathGlobs } from '../../../shared/domains/logs/path-globs.ts';
import type { Logger } from '../../../shared/log/logger.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import type { Collector, CollectorStatus } from '../collector.ts';
import { registerLogTail } from './log-tail.ts';

/** Plain log files under the operator's globs (--log-paths): none given, the collector is unavailable and says how to allow some. */
export class LogsCollector implements Collector {
  readonly name = 'logs';

  constructor(
    private readonly options: LogsOptions,
    private readonly log: Logger,
  ) {}

  async probe(): Promise<CollectorStatus> {
    return this.options.logPaths.length
      ? { available: true, reason: '' }
      : { available: false, absent: true, reason: "no log files are allowed on this host: its operator names them with --log-paths '/var/log/*.log'" };
  }

  register(dispatcher: Dispatcher): void {
    registerLogTail(dispatcher, pathGlobs(this.options.logPaths), this.log);
  }
}
