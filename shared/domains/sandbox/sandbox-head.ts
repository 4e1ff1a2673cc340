import type { DomainHead } from '../domain.ts';

/** Containers labelled as sandboxes, seen from the host. */
export const sandboxHead = {
  name: 'sandbox',
  rank: 60,
  icon: '<rect x="3" y="3" width="18" height="18" rx="2" stroke-dasharray="3 3"/><circle cx="12" cy="12" r="3"/>',
  flags: {
    'sandbox-label': {
      type: 'string',
      description: 'the container label that marks a sandbox (its value is the sandbox id)',
      default: 'fleetmesh.sandbox',
      placeholder: 'LABEL',
    },
  },
} as const satisfies DomainHead;
