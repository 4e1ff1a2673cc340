import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { INVENTORY_PARTS } from '../parts.ts';
import { inventoryGraph } from './inventory-graph.ts';

/**
 * A host's inventory: its own description, then each domain's part (its
 * engine's containers, the clusters it belongs to, its guests…), as the
 * domains' parts files declare them.
 */
export const hostInventoryShape = z.object({
  hostname: z.string(),
  os: z.string(),
  arch: z.string(),
  ...Object.assign({}, ...INVENTORY_PARTS.map((part) => part.shape)),
});

const inventoryOutput = hostInventoryShape.extend({
  ...Object.assign({}, ...INVENTORY_PARTS.map((part) => part.counts ?? {})),
  sampled_at_unix_ms: z.number(),
});

export const inventoryScan = defineAction({
  id: 'checkup.inventory_scan',
  tool: 'inventory_scan',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'checkup',
  title: 'Inventory scan',
  description: 'What runs where: OS, Docker, cluster memberships, containers and published ports, listening ports, VM guests.',
  input: z.object({}).strict(),
  output: inventoryOutput,
  resources: { kind: 'container', lists: [{ field: 'containers', name: 'name', count: 'container_count' }] },
  table: { columns: ['os', ...INVENTORY_PARTS.flatMap((part) => part.columns ?? [])] },
  related: ['checkup.inventory_export'],
});

export const inventoryExport = defineAction({
  id: 'checkup.inventory_export',
  tool: 'inventory_export',
  risk: 'read',
  level: 0,
  runsOn: 'host',
  collector: 'checkup',
  title: 'Inventory export',
  description: 'The fleet as one Mermaid graph (hosts, containers, ports, clusters, VM guests), or json.',
  input: z
    .object({
      format: z.enum(['mermaid', 'json']).optional().describe('default mermaid'),
    })
    .strict(),
  output: inventoryOutput.extend({ format: z.enum(['mermaid', 'json']) }),
  resources: { kind: 'container', lists: [{ field: 'containers', name: 'name', count: 'container_count' }], callFields: ['format'] },
  table: { columns: ['format', ...INVENTORY_PARTS.flatMap((part) => Object.keys(part.counts ?? {}))] },
  view: (hosts) => (hosts.some((host) => host.format === 'mermaid') ? { language: 'mermaid', text: inventoryGraph(hosts) } : undefined),
  related: ['checkup.inventory_scan'],
});
