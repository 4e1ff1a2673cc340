import type { DomainParts } from '../domain-parts.ts';

/** A host's installed packages are named HOST/NAME: a grant on the host, or package:HOST/NAME, shows one. */
export const packagesParts = {
  resourceTypes: {
    package: { scope: 'host', rank: 150 },
  },
} as const satisfies DomainParts;
