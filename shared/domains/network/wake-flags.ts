import type { FlagSpecs } from '../../options/command-line.ts';

/** The `fleetmesh broker` flags of wake (resolved in broker/domains/network/wake-targets.ts). */
export const WAKE_FLAGS = {
  'wake-target': {
    type: 'list',
    description: 'a machine wake knows by name: NAME=MAC, or NAME=MAC@BROADCAST to say which segment it is on',
    default: [],
    repeatable: true,
    placeholder: 'NAME=MAC[@BROADCAST],…',
  },
} as const satisfies FlagSpecs;
