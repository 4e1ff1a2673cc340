import { commandsHead } from '../../../shared/domains/commands/commands-head.ts';
import type { CommandsOptions } from '../../../shared/domains/commands/commands-options.ts';
import type { CollectorPlugin } from '../collector-plugin.ts';
import { CommandsCollector } from './commands-collector.ts';

/** The commands a host's operator declared for the fleet to run by name (--commands). */
export const commandsPlugin: CollectorPlugin<CommandsCollector> = {
  domain: commandsHead,
  create: ({ domainOptions, log }) => new CommandsCollector(domainOptions as CommandsOptions, log),
};
