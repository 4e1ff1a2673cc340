import type { FlagSpec } from './command-line.ts';

/** Flags every long-running command shares. */
export const LOG_FLAGS = {
  'log-level': { type: 'string', description: 'how much to log', default: 'info', choices: ['debug', 'info', 'warn', 'error'], placeholder: 'LEVEL' },
  'log-format': { type: 'string', description: 'log line format on stderr', default: 'text', choices: ['text', 'json'], placeholder: 'FORMAT' },
} as const satisfies Record<string, FlagSpec>;

/** The broker data dir and store flags, shared by the broker and the admin commands that act on it. */
export const BROKER_DATA_DIR_FLAG = {
  'data-dir': {
    type: 'string',
    description: "the broker's state: CA, certificates and database",
    default: '.fleetmesh/broker',
    placeholder: 'DIR',
  },
  store: {
    type: 'string',
    description:
      "the broker's database: sqlite:PATH, or postgres://USER:PASSWORD@HOST:5432/DB shared by the brokers of a cluster (default: fleetmesh.db in --data-dir)",
    placeholder: 'URL',
  },
} as const satisfies Record<string, FlagSpec>;

/** The output format of the admin commands that print rows. */
export const OUTPUT_FLAG = {
  output: { type: 'string', description: 'text for people, json for scripts', default: 'text', choices: ['text', 'json'], placeholder: 'FORMAT', env: false },
} as const satisfies Record<string, FlagSpec>;
