import type { DomainHead } from '../domain.ts';

/** The agent itself: who it is, what it runs, its labels. */
export const agentHead = {
  name: 'agent',
  rank: 20,
  icon: '<rect x="5" y="8" width="14" height="12" rx="2"/><path d="M12 8V4M9 14h.01M15 14h.01"/>',
} as const satisfies DomainHead;
