import { z } from 'zod';
import { defineAction } from '../../catalog/action.ts';
import { inventoryGraph } from './inventory-graph.ts';

const publishedPortShape = z.object({
  ip: z.string().nullable(),
  public_port: z.number(),
  private_port: z.number(),
  protocol: z.string(),
});

export const hostInventoryShape = z.object({
  hostname: z.string(),
  os: z.string(),
  arch: z.string(),
  docker_version: z.string().nullable().describe('null when Docker could not be asked (see failed_collectors).'),
  swarm: z
    .object({ role: z.string(), cluster: z.string().describe('The swarm name, else its id; empty on a worker that cannot read it.'), node_id: z.string() })
    .nullable(),
  proxmox: z.object({ node: z.string(), cluster: z.string() }).nullable(),
  containers: z.array(z.object({ name: z.string(), image: z.string(), state: z.string(), ports: z.array(publishedPortShape) })),
  listening_ports: z
    .array(z.object({ protocol: z.string(), address: z.string(), port: z.number(), process: z.string().nullable() }))
    .describe('Sockets other machines can reach (not loopback).'),
  guests: z.array(z.object({ vmid: z.number(), name: z.string(), type: z.string(), node: z.string(), status: z.string() })),
});

const inventoryOutput = hostInventoryShape.extend({
  container_count: z.number().nullable(),
  guest_count: z.number().nullable(),
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
  description: 'What runs where: OS, Docker, swarm, Proxmox node, containers and published ports, listening ports, PVE guests.',
  input: z.object({}).strict(),
  output: inventoryOutput,
  resources: { kind: 'container', lists: [{ field: 'containers', name: 'name', count: 'container_count' }] },
  table: { columns: ['os', 'docker_version', 'swarm.role', 'container_count', 'listening_ports', 'guest_count'] },
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
  description: 'The fleet as one Mermaid graph (hosts, containers, ports, swarms, PVE guests), or json.',
  input: z
    .object({
      format: z.enum(['mermaid', 'json']).optional().describe('default mermaid'),
    })
    .strict(),
  output: inventoryOutput.extend({ format: z.enum(['mermaid', 'json']) }),
  resources: { kind: 'container', lists: [{ field: 'containers', name: 'name', count: 'container_count' }], callFields: ['format'] },
  table: { columns: ['format', 'container_count', 'guest_count'] },
  view: (hosts) => (hosts.some((host) => host.format === 'mermaid') ? { language: 'mermaid', text: inventoryGraph(hosts) } : undefined),
  related: ['checkup.inventory_scan'],
});
