import { type CommandSpec, envName } from '../../shared/options/command-line.ts';

/** The environment variables a command reads, one per flag: what a compose file or a chart may set for it. */
export function flagVariables(command: CommandSpec): Set<string> {
  return new Set(Object.entries(command.flags).flatMap(([flag, spec]) => envName(flag, spec) ?? []));
}
