import type { FlagSpecs } from '../../options/command-line.ts';

/** The `fleetmesh agent` flags of the packages collector (resolved in packages-options.ts). */
export const PACKAGES_FLAGS = {
  'host-root': {
    type: 'string',
    description:
      "where the host's root file system is seen (its / mounted read-only into the agent's container, such as /host): the package databases, apt's lists and the reboot-required files are read under it",
    default: '/',
    placeholder: 'DIR',
  },
} as const satisfies FlagSpecs;
