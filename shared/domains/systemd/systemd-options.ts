import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { FleetError } from '../../errors/fleet-error.ts';

/** How the systemd collector reaches the host's journal and its service manager. */
export interface SystemdOptions {
  /** The host's journal directory mounted into the agent's container; undefined: journalctl reads its own system's journal. */
  journalDir: string | undefined;
  /** The D-Bus system bus socket of the host's systemd. */
  systemBusSocket: string;
  /** The journalctl program. */
  journalctl: string;
}

export interface SystemdFlagValues {
  journalDir: string | undefined;
  systemBus: string;
  journalctl: string;
}

/** Resolves the flags once: a journal directory that is not one stops the agent with one line. */
export function resolveSystemdOptions(flags: SystemdFlagValues): SystemdOptions {
  let journalDir: string | undefined;
  if (flags.journalDir !== undefined) {
    journalDir = resolve(flags.journalDir);
    let isDirectory = false;
    try {
      isDirectory = statSync(journalDir).isDirectory();
    } catch {
      // reported below
    }
    if (!isDirectory) {
      throw new FleetError('invalid_argument', `--journal-dir ${journalDir} is not a directory`, {
        hint: "Mount the host's /var/log/journal (read-only) into the agent's container and name it here.",
      });
    }
  }
  return { journalDir, systemBusSocket: resolve(flags.systemBus), journalctl: flags.journalctl };
}
