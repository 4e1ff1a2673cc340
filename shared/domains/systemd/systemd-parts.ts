import type { DomainParts } from '../domain-parts.ts';

/** A host's systemd units are named HOST/NAME: a grant on the host, or unit:HOST/NAME, shows one. */
export const systemdParts = {
  resourceTypes: {
    unit: { scope: 'host', rank: 140 },
  },
} as const satisfies DomainParts;
