import { logsHead } from '../../../shared/domains/logs/logs-head.ts';
import type { LogsOptions } from '../../../shared/domains/logs/logs-options.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { LogsCollector } from './logs-collector.ts';

/** Log files the host's operator allows. */
export const logsPlugin: CollectorPlugin<LogsCollector> = {
  domain: logsHead,
  create: ({ domainOptions, log }) => new LogsCollector(domainOptions as LogsOptions, log),
};
