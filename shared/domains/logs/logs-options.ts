import { isAbsolute } from 'node:path';
import { FleetError } from '../../errors/fleet-error.ts';

/** What the logs collector may read. */
export interface LogsOptions {
  /** Globs of absolute paths; empty: nothing. */
  logPaths: readonly string[];
}

/** Resolves the flags once: a glob that is not an absolute path stops the agent with one line. */
export function resolveLogsOptions(flags: { logPaths: readonly string[] }): LogsOptions {
  const relative = flags.logPaths.find((glob) => !isAbsolute(glob));
  if (relative !== undefined) {
    throw new FleetError('invalid_argument', `--log-paths ${relative} is not an absolute path`, {
      hint: "Name log files from the root, such as '/var/log/*.log'.",
    });
  }
  return { logPaths: flags.logPaths };
}
