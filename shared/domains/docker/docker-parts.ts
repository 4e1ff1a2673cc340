import type { DomainParts } from '../domain-parts.ts';

/** Each host's containers and volumes, as its engine lists them. */
export const dockerParts = {
  resourceTypes: {
    container: { scope: 'host', rank: 10 },
    volume: { scope: 'host', rank: 100 },
  },
} as const satisfies DomainParts;
