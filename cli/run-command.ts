import { FleetError, toFleetError } from '../shared/errors/fleet-error.ts';
import { terminalSafe } from '../shared/format/terminal-safe.ts';
import type { FlagSpecs } from '../shared/options/command-line.ts';
import type { CliIo, Command } from './command.ts';

/**
 * Output fenced for the terminal. Everything any command prints goes through
 * it: agent names, labels, versions, errors, audit notes and tool answers are
 * written by whoever controls a host, and none of their control characters
 * reaches the terminal as one (`fleetmesh agents` once printed an agent's
 * labels raw, escape sequences and all).
 */
export function fencedIo(unfenced: CliIo): CliIo {
  return { ...unfenced, stdout: (text) => unfenced.stdout(terminalSafe(text)), stderr: (text) => unfenced.stderr(terminalSafe(text)) };
}

/** Parses one command's flags and runs it: its help, or its exit code, or one line saying what is wrong and what to do. */
export async function runCommand(name: string, load: () => Promise<Command<FlagSpecs>>, argv: string[], io: CliIo): Promise<number> {
  try {
    const [command, { formatHelp, parseCommandLine, unknownVariablesWarning }] = await Promise.all([load(), import('../shared/options/command-line.ts')]);
    const parsed = parseCommandLine(command.spec, argv, io.env);
    if (parsed.help) {
      io.stdout(`${formatHelp(command.spec)}\n`);
      return 0;
    }
    const warning = unknownVariablesWarning(command.spec, io.env);
    if (warning) io.stderr(`fleetmesh ${name}: ${warning}\n`);
    return await command.run(parsed, io);
  } catch (error) {
    const failure = toFleetError(error);
    // One line: what is wrong, then what to do about it.
    io.stderr(`fleetmesh ${name}: ${failure.message}${failure.hint ? ` (${failure.hint.replace(/\.$/, '')})` : ''}\n`);
    return error instanceof FleetError && failure.code === 'invalid_argument' ? 2 : 1;
  }
}
