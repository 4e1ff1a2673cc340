import { z } from 'zod';
import type { DomainParts, HostFacts } from '../domain-parts.ts';

/** The service a task name (`service.slot` or `service.nodeid`) belongs to. */
export const serviceOfTask = (name: string): string => (name.includes('.') ? name.slice(0, name.lastIndexOf('.')) : name);

const text = (facts: HostFacts, key: string): string => (typeof facts[key] === 'string' ? (facts[key] as string) : '');

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
  inventory: {
    shape: {
      swarm: z
        .object({ role: z.string(), cluster: z.string().describe('The swarm name, else its id; empty on a worker that cannot read it.'), node_id: z.string() })
        .nullable(),
    },
    columns: ['swarm.role'],
    async scan({ facts }) {
      const role = text(facts, 'swarm_role');
      return {
        fields: { swarm: role ? { role, cluster: text(facts, 'swarm_name') || text(facts, 'swarm_id'), node_id: text(facts, 'swarm_node_id') } : null },
      };
    },
    // Each swarm once, joined by each of its hosts with the host's role.
    graph: () => {
      const swarms = new Map<string, string>();
      return (answer, draw) => {
        const swarm = answer.swarm as { role: string; cluster: string } | null | undefined;
        if (!swarm) return;
        const key = swarm.cluster || `unnamed swarm of ${String(answer.host)}`;
        let id = swarms.get(key);
        if (!id) {
          id = `s${swarms.size}`;
          swarms.set(key, id);
          draw.node(id, `swarm ${key}`, 'hexagon');
        }
        draw.edge(draw.host, id, '---', swarm.role);
      };
    },
  },
} as const satisfies DomainParts;
