import type { DomainParts } from '../domain-parts.ts';

/** The guests of each Proxmox VE cluster (or lone node), as its agents report them. */
export const proxmoxParts = {
  resourceTypes: {
    // Any agent of the cluster could have reported it: a grant on the reporting host covers what its API shows.
    guest: { scope: 'fleet', rank: 110, shownBy: ['host'] },
  },
} as const satisfies DomainParts;
