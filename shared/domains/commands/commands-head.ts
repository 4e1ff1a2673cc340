import type { DomainHead } from '../domain.ts';
import { COMMANDS_FLAGS } from './commands-flags.ts';
import { resolveCommandsOptions } from './commands-options.ts';

/** The commands a host's operator declares for the fleet to run by name (a runbook's diagnostics and fixes), instead of a shell over ssh. */
export const commandsHead = {
  name: 'commands',
  rank: 146,
  icon: '<rect x="3" y="4" width="18" height="16" rx="2"/><path d="M7 9l3 3-3 3M13 15h4"/>',
  flags: COMMANDS_FLAGS,
  agentOptions: (flags) => resolveCommandsOptions(flags.commands as string | undefined),
} as const satisfies DomainHead;
