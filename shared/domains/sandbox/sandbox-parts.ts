import type { DomainParts } from '../domain-parts.ts';

/** A host's sandboxes: containers carrying the sandbox label. */
export const sandboxParts = {
  resourceTypes: {
    sandbox: { scope: 'host', rank: 20 },
  },
} as const satisfies DomainParts;
