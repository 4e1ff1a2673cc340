import type { DomainParts } from '../domain-parts.ts';

/** The service a task name (`service.slot` or `service.nodeid`) belongs to. */
export const serviceOfTask = (name: string): string => (name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : name);

/** What each swarm's managers report of it; a service grant shows its tasks and the stacks that hold it. */
export const swarmParts = {
  resourceTypes: {
    service: { scope: 'fleet', rank: 30 },
    task: { scope: 'fleet', rank: 40, shownBy: ['service'], parentsOf: (name: string) => [{ type: 'service', name: serviceOfTask(name) }] },
    node: { scope: 'fleet', rank: 50 },
    stack: { scope: 'fleet', rank: 60, shownBy: ['service'] },
    config: { scope: 'fleet', rank: 70 },
    secret: { scope: 'fleet', rank: 80 },
    network: { scope: 'fleet', rank: 90 },
  },
} as const satisfies DomainParts;
