import type { FlagSpecs } from '../../options/command-line.ts';

/** The `fleetmesh agent` flags of the logs collector (resolved in logs-options.ts). */
export const LOGS_FLAGS = {
  'log-paths': {
    type: 'list',
    description:
      "the log files log_tail may read, as globs of absolute paths (* within a folder, ** across folders), such as '/var/log/*.log'; a path asked for is resolved (symlinks, ..) before it is matched; none: log_tail reads nothing",
    default: [],
    repeatable: true,
    placeholder: 'GLOB',
  },
} as const satisfies FlagSpecs;
