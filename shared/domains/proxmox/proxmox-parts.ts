import type { DomainParts } from '../domain-parts.ts';

/** The guests of each Proxmox VE cluster (or lone node), as its agents report them. */
export const proxmoxParts = {
  resourceTypes: {
    // Any agent of the cluster could have reported it: a grant on the reporting host covers what its API shows.
    guest: { scope: 'fleet', rank: 110, shownBy: ['host'] },
  },
  trust: [
    {
      check: 'proxmox_trust',
      category: 'proxmox',
      skipped: (facts) => facts.proxmox_insecure === true,
      summary: 'proxmox collector skips TLS verification (insecure mode)',
      subject: 'proxmox',
      message: "the Proxmox VE API's certificate is not checked (--proxmox-insecure)",
      action: 'Pin it with --proxmox-fingerprint or trust its CA with --proxmox-ca-file.',
    },
  ],
} as const satisfies DomainParts;
