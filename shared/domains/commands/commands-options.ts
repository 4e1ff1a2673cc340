import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { FleetError } from '../../errors/fleet-error.ts';
import { SystemAccounts } from '../../options/system-accounts.ts';
import type { CommandDefinition } from './command-definition.ts';
import { isProgram, parseCommandFile } from './command-file.ts';

/** The named commands of this host, resolved once from --commands. */
export interface CommandsOptions {
  /** The file they came from; undefined when none was given. */
  readonly file: string | undefined;
  readonly commands: readonly CommandDefinition[];
}

/**
 * Reads and checks the commands file when the agent starts: a problem stops
 * it with one line. Whoever can write the file chooses what the agent runs,
 * so, as sshd does with key files, it must be owned by root or by the agent's
 * own user, and not writable by its group or others.
 * `agentUid`: the agent's user (a parameter so tests can be another).
 */
export function resolveCommandsOptions(file: string | undefined, agentUid: number = process.getuid?.() ?? 0): CommandsOptions {
  if (file === undefined) return { file: undefined, commands: [] };
  const path = resolve(file);
  let text: string;
  try {
    const stats = statSync(path);
    if (stats.uid !== 0 && stats.uid !== agentUid) {
      throw new FleetError(
        'invalid_argument',
        `--commands ${path} is owned by uid ${stats.uid}, neither root nor the agent's user, who could then choose what the agent runs`,
        {
          hint: `chown root ${path}`,
        },
      );
    }
    if ((stats.mode & 0o022) !== 0) {
      throw new FleetError('invalid_argument', `--commands ${path} may be written by its group or by others, who could then choose what the agent runs`, {
        hint: `chmod go-w ${path}`,
      });
    }
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof FleetError) throw error;
    throw new FleetError('invalid_argument', `--commands ${path} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, {
      hint: 'Give the path of a YAML list of commands.',
    });
  }
  return { file: path, commands: parseCommandFile(text, path, { accounts: SystemAccounts.read(), agentUid, isProgram }) };
}
