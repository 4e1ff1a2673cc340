import type { DomainHead } from '../domain.ts';

/** A host's check-up, as homebutler groups it: what changed, what is wrong, what runs where, whether its config holds. */
export const checkupHead = {
  name: 'checkup',
  rank: 80,
  icon: '<rect x="5" y="4" width="14" height="17" rx="2"/><path d="M9 4V2h6v2M9 13l2 2 4-4"/>',
} as const satisfies DomainHead;
