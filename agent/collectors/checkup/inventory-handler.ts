import type { z } from 'zod';
import { agentInfo } from '../../../shared/domains/agent/agent-actions.ts';
import type { hostInventoryShape, inventoryExport, inventoryScan } from '../../../shared/domains/checkup/inventory-actions.ts';
import { dockerList } from '../../../shared/domains/docker/docker-actions.ts';
import { proxmoxGuests } from '../../../shared/domains/proxmox/proxmox-actions.ts';
import { openPorts } from '../../../shared/domains/system/system-actions.ts';
import type { ActionHandler, CallContext, HandlerResult } from '../../dispatcher/dispatcher.ts';
import type { LocalCalls } from './local-calls.ts';
import { reachableSockets } from './reachable-sockets.ts';

type HostInventory = z.infer<typeof hostInventoryShape>;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** This host's inventory from its own actions; a collector that does not answer leaves its part empty and is named in failed_collectors. */
async function scanHost(
  calls: LocalCalls,
  context: CallContext,
): Promise<{ inventory: HostInventory; counts: { container_count: number | null; guest_count: number | null }; result: Omit<HandlerResult, 'payload'> }> {
  const [info, containers, ports] = await Promise.all([
    calls.run(agentInfo, {}, context),
    calls.run(dockerList, { all: true }, context),
    calls.run(openPorts, {}, context),
  ]);
  const facts = info.payload?.facts ?? {};
  const proxmoxUp = info.payload?.collectors.some((c) => c.name === 'proxmox' && c.available) ?? false;
  const guests = proxmoxUp ? await calls.run(proxmoxGuests, {}, context) : undefined;
  const failed = [!containers.payload && 'docker', !ports.payload && 'ports', guests && !guests.payload && 'proxmox'].filter((name): name is string =>
    Boolean(name),
  );
  const swarmRole = text(facts.swarm_role);
  const proxmoxNode = text(facts.proxmox_node);
  const inventory: HostInventory = {
    hostname: text(facts.hostname),
    os: text(facts.os),
    arch: text(facts.arch),
    docker_version: typeof facts.docker_version === 'string' ? facts.docker_version : null,
    swarm: swarmRole ? { role: swarmRole, cluster: text(facts.swarm_name) || text(facts.swarm_id), node_id: text(facts.swarm_node_id) } : null,
    proxmox: proxmoxNode ? { node: proxmoxNode, cluster: text(facts.proxmox_cluster) } : null,
    containers:
      containers.payload?.containers.map((c) => ({
        name: c.name,
        image: c.image,
        state: c.state,
        ports: c.ports.flatMap((p) =>
          p.public_port === null ? [] : [{ ip: p.ip, public_port: p.public_port, private_port: p.private_port, protocol: p.protocol }],
        ),
      })) ?? [],
    listening_ports: reachableSockets(ports.payload?.ports ?? []).map((p) => ({ protocol: p.protocol, address: p.address, port: p.port, process: p.process })),
    guests: guests?.payload?.guests.map((g) => ({ vmid: g.vmid, name: g.name, type: g.type, node: g.node, status: g.status })) ?? [],
  };
  return {
    inventory,
    counts: {
      container_count: containers.payload ? inventory.containers.length : null,
      guest_count: guests === undefined ? 0 : guests.payload ? inventory.guests.length : null,
    },
    result: {
      failedCollectors: failed,
      errors: [containers, ports, ...(guests ? [guests] : [])].flatMap((answer) => (answer.payload ? [] : answer.errors.slice(0, 1))),
    },
  };
}

export function createInventoryScanHandler(calls: LocalCalls): ActionHandler<typeof inventoryScan> {
  return async (_params, context) => {
    const { inventory, counts, result } = await scanHost(calls, context);
    return { payload: { ...inventory, ...counts, sampled_at_unix_ms: Date.now() }, ...result };
  };
}

/** inventory_export: the same scan; the broker draws the fleet's graph from every host's answer (mermaid), or leaves the data as it is (json). */
export function createInventoryExportHandler(calls: LocalCalls): ActionHandler<typeof inventoryExport> {
  return async (params, context) => {
    const { inventory, counts, result } = await scanHost(calls, context);
    return { payload: { ...inventory, ...counts, format: params.format ?? 'mermaid', sampled_at_unix_ms: Date.now() }, ...result };
  };
}
