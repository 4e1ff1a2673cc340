import type { z } from 'zod';
import type { rowShape } from '../../shared/domains/fleet/index-shapes.ts';
import type { GuestRecord } from '../../shared/domains/proxmox/guest-inventory.ts';
import { serviceProgress } from '../../shared/domains/swarm/convergence.ts';
import type { ContainerRecord, ServiceRecord, SwarmSnapshot, TaskRecord, VolumeRecord } from '../../shared/domains/swarm/records.ts';
import type { Host } from '../agents/agent-registry.ts';
import type { Identity } from '../auth/identities.ts';
import { mayRead } from '../auth/visibility.ts';
import type { FleetIndex } from './fleet-index.ts';

export type Row = z.infer<typeof rowShape>;

/** A resource as find and describe see it: its row, what it is made of, and for grants its kind and name. */
export interface Resource {
  row: Row;
  record: unknown;
  labels: Record<string, string>;
  image?: string;
  /** The node or host it runs on, for the node filter. */
  node?: string;
  /** Its swarm, for swarm resources. */
  snapshot?: SwarmSnapshot;
  host?: Host;
}

/** The agent running on a swarm node (its engine reported that node id). */
export function agentOnNode(hosts: readonly Host[], nodeId: string): Host | undefined {
  return hosts.find((h) => h.hello?.facts.swarm_node_id === nodeId);
}

function nodeName(snapshot: SwarmSnapshot, id: string): string {
  return snapshot.nodes.find((n) => n.id === id)?.hostname ?? id;
}

/** Whether an identity may see a resource: `mayRead`, the one rule every read answer filters by. */
export function visible(identity: Identity, resource: Resource): boolean {
  const { row } = resource;
  return mayRead(identity, {
    type: row.type,
    name: row.name,
    ...(row.host !== undefined ? { host: row.host } : {}),
    ...(row.type === 'task' ? { parents: [{ type: 'service', name: (resource.record as TaskRecord).service_name }] } : {}),
    ...(row.type === 'stack'
      ? { parents: (resource.snapshot?.services ?? []).filter((s) => s.stack === row.name).map((s) => ({ type: 'service', name: s.name })) }
      : {}),
  });
}

function serviceRow(service: ServiceRecord, snapshot: SwarmSnapshot): Resource {
  const progress = serviceProgress(service, snapshot.tasks);
  return {
    row: {
      id: service.id,
      name: service.name,
      type: 'service',
      ...(service.stack ? { stack: service.stack } : {}),
      state: progress.state,
      detail: service.image,
      desired: progress.desired,
      running: progress.running,
      cluster: snapshot.cluster_name,
    },
    record: service,
    labels: service.labels,
    image: service.image,
    snapshot,
  };
}

function taskRow(task: TaskRecord, snapshot: SwarmSnapshot, stack: string | null): Resource {
  return {
    row: {
      id: task.id,
      name: task.name,
      type: 'task',
      ...(stack ? { stack } : {}),
      state: task.state,
      detail: nodeName(snapshot, task.node_id),
      cluster: snapshot.cluster_name,
    },
    record: task,
    labels: {},
    image: task.image,
    node: nodeName(snapshot, task.node_id),
    snapshot,
  };
}

function volumeRow(volume: VolumeRecord, host: Host | undefined, snapshot?: SwarmSnapshot): Resource {
  return {
    row: {
      id: volume.name,
      name: volume.name,
      type: 'volume',
      ...(volume.stack ? { stack: volume.stack } : {}),
      detail: volume.driver,
      ...(host ? { host: host.name } : {}),
    },
    record: volume,
    labels: volume.labels,
    ...(host ? { node: host.name, host } : {}),
    ...(snapshot ? { snapshot } : {}),
  };
}

function containerRow(container: ContainerRecord, host: Host): Resource {
  return {
    row: {
      id: container.id.slice(0, 12),
      name: container.name,
      type: 'container',
      ...(container.stack ? { stack: container.stack } : {}),
      state: container.state,
      detail: container.image,
      host: host.name,
    },
    record: container,
    labels: container.labels,
    image: container.image,
    node: host.name,
    host,
  };
}

/** A sandbox is a labelled container: the container's row, named by its sandbox id. */
function sandboxRow(container: ContainerRecord, sandboxId: string, host: Host): Resource {
  return {
    ...containerRow(container, host),
    row: {
      id: sandboxId,
      name: sandboxId,
      type: 'sandbox',
      state: container.state === 'running' ? 'ready' : container.state,
      detail: container.name,
      host: host.name,
    },
  };
}

/**
 * The guests of every Proxmox VE cluster, each once: agents of one cluster
 * report the same guests, and the newest report of the cluster wins. A node
 * outside any cluster is its own.
 */
function guestRows(index: FleetIndex, byId: Map<string, Host>): Resource[] {
  const newest = new Map<string, { host: Host; cluster: string | null; guests: GuestRecord[]; taken: number }>();
  for (const entry of index.guestEntries()) {
    const host = byId.get(entry.hostId);
    if (!host) continue;
    const { cluster, node, guests, taken_unix_ms } = entry.inventory;
    const key = cluster ? `cluster:${cluster}` : `node:${node ?? host.id}`;
    const current = newest.get(key);
    // An online agent's report beats an offline one's, then the newer beats the older.
    const better =
      !current ||
      (host.state === 'online') > (current.host.state === 'online') ||
      ((host.state === 'online') === (current.host.state === 'online') && taken_unix_ms > current.taken);
    if (better) newest.set(key, { host, cluster, guests, taken: taken_unix_ms });
  }
  // The row names the agent on the guest's own node when there is one, else the agent that reported it.
  const nodeKey = (cluster: unknown, node: unknown) => JSON.stringify([cluster ?? null, node]);
  const agentOnPveNode = new Map<string, Host>();
  for (const host of byId.values()) {
    const facts = host.hello?.facts;
    const key = nodeKey(facts?.proxmox_cluster, facts?.proxmox_node);
    if (facts?.proxmox_node !== undefined && !agentOnPveNode.has(key)) agentOnPveNode.set(key, host);
  }
  const rows: Resource[] = [];
  for (const { host: reporter, cluster, guests } of newest.values()) {
    for (const guest of guests) {
      const host = agentOnPveNode.get(nodeKey(cluster, guest.node)) ?? reporter;
      rows.push({
        row: {
          id: String(guest.vmid),
          name: guest.name || String(guest.vmid),
          type: 'guest',
          state: guest.template ? 'template' : guest.status,
          detail: `${guest.type} on ${guest.node}`,
          host: host.name,
          ...(cluster ? { cluster } : {}),
        },
        record: { ...guest, reported_by: reporter.name },
        labels: Object.fromEntries(guest.tags.map((tag) => [tag, ''])),
        node: guest.node,
        host,
      });
    }
  }
  return rows;
}

/**
 * Which resources a caller wants, by what names them: id (a container's short
 * id), name, host, and the record's own id (a container's full id). Asked
 * before a host's or container's row is built, so a lookup of a few things in a
 * fleet of 2,000 hosts builds a few rows, not tens of thousands; a superset is
 * fine (the caller picks among what passes).
 */
export type ResourceMatch = (id: string, name: string, host: string | undefined, recordId: string | undefined) => boolean;

/**
 * Every resource of the fleet the index knows, as rows with what filters need;
 * with `types`, only resources of those types (a fleet of 2,000 hosts has
 * tens of thousands of container rows, which a search for a host need not
 * build); with `match`, only those it passes.
 */
export function allResources(index: FleetIndex, hosts: readonly Host[], types?: ReadonlySet<string>, match?: ResourceMatch): Resource[] {
  const wants = (type: string) => types === undefined || types.has(type);
  const resources: Resource[] = [];
  const byId = new Map(hosts.map((h) => [h.id, h]));
  if (wants('host'))
    for (const host of hosts) {
      if (match && !match(host.id, host.name, host.name, host.id)) continue;
      resources.push({
        row: {
          id: host.id,
          name: host.name,
          type: 'host',
          state: host.state,
          detail: [host.hello?.facts.os, host.version && `fleetmesh ${host.version}`].filter(Boolean).join(', ') || undefined,
          host: host.name,
        },
        record: {
          name: host.name,
          id: host.id,
          state: host.state,
          labels: host.labels,
          version: host.version,
          facts: host.hello?.facts ?? {},
          collectors: host.hello?.collectors ?? [],
        },
        labels: host.labels,
        node: host.name,
        host,
      });
    }
  const containers = wants('container');
  const sandboxes = wants('sandbox');
  const volumes = wants('volume');
  for (const entry of containers || sandboxes || volumes ? index.inventoryEntries() : []) {
    const host = byId.get(entry.hostId);
    if (!host) continue;
    for (const inventoried of containers || sandboxes ? entry.inventory.containers : []) {
      const { sandbox_id: sandboxId } = inventoried;
      const asContainer = containers && (!match || match(inventoried.id.slice(0, 12), inventoried.name, host.name, inventoried.id));
      const asSandbox = sandboxes && !!sandboxId && (!match || match(sandboxId, sandboxId, host.name, undefined));
      if (!asContainer && !asSandbox) continue;
      // An engine event newer than the inventory tells the container's state first.
      const state = index.containerEvents.stateSince(host.id, inventoried.id, entry.receivedAt);
      const container = state == null || state === inventoried.state ? inventoried : { ...inventoried, state };
      if (asContainer) resources.push(containerRow(container, host));
      if (asSandbox) resources.push(sandboxRow(container, sandboxId, host));
    }
    for (const volume of volumes ? entry.inventory.volumes : []) {
      if (!match || match(volume.name, volume.name, host.name, undefined)) resources.push(volumeRow(volume, host));
    }
  }
  // Rows so far were kept to the types and matches as they were built.
  const keptAsBuilt = resources.length;
  if (wants('guest')) resources.push(...guestRows(index, byId));
  for (const { snapshot } of index.swarmEntries()) {
    const stacks = new Map<string, ServiceRecord[]>();
    for (const service of snapshot.services) {
      resources.push(serviceRow(service, snapshot));
      if (service.stack) stacks.set(service.stack, [...(stacks.get(service.stack) ?? []), service]);
    }
    const stackOf = new Map(snapshot.services.map((s) => [s.id, s.stack]));
    for (const task of snapshot.tasks) resources.push(taskRow(task, snapshot, stackOf.get(task.service_id) ?? null));
    for (const node of snapshot.nodes) {
      resources.push({
        row: {
          id: node.id,
          name: node.hostname,
          type: 'node',
          state: node.state,
          detail: `${node.role}, ${node.availability}`,
          cluster: snapshot.cluster_name,
        },
        record: node,
        labels: node.labels,
        node: node.hostname,
        snapshot,
      });
    }
    for (const [name, members] of stacks) {
      const progress = members.map((s) => serviceProgress(s, snapshot.tasks));
      resources.push({
        row: {
          id: name,
          name,
          type: 'stack',
          state: progress.every((p) => p.converged) ? 'running' : 'degraded',
          desired: members.length,
          cluster: snapshot.cluster_name,
        },
        record: { name, services: members.map((s) => s.name) },
        labels: {},
        snapshot,
      });
    }
    for (const network of snapshot.networks) {
      resources.push({
        row: {
          id: network.id,
          name: network.name,
          type: 'network',
          ...(network.stack ? { stack: network.stack } : {}),
          detail: network.driver,
          cluster: snapshot.cluster_name,
        },
        record: network,
        labels: network.labels,
        snapshot,
      });
    }
    for (const [kind, items] of [
      ['config', snapshot.configs],
      ['secret', snapshot.secrets],
    ] as const) {
      for (const item of items) {
        resources.push({
          row: {
            id: item.id,
            name: item.name,
            type: kind,
            ...(item.stack ? { stack: item.stack } : {}),
            ...(item.size_bytes !== null ? { detail: `${item.size_bytes} bytes` } : {}),
            cluster: snapshot.cluster_name,
          },
          record: item,
          labels: item.labels,
          snapshot,
        });
      }
    }
  }
  // Guests' and the swarms' rows are few: built whole, then kept to the types (and matches) asked for.
  if (types === undefined && match === undefined) return resources;
  const kept = resources.slice(0, keptAsBuilt);
  for (let i = keptAsBuilt; i < resources.length; i += 1) {
    const { row, record } = resources[i] as Resource;
    if (types && !types.has(row.type)) continue;
    if (match && !match(row.id, row.name, row.host, (record as { id?: unknown }).id as string | undefined)) continue;
    kept.push(resources[i] as Resource);
  }
  return kept;
}
