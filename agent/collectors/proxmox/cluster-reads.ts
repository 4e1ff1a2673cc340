import type { ActionOutput } from '../../../shared/catalog/action.ts';
import type { proxmoxGuests, proxmoxNode, proxmoxStatus } from '../../../shared/domains/proxmox/proxmox-actions.ts';
import { type FleetError, toFleetError } from '../../../shared/errors/fleet-error.ts';
import type { Dispatcher } from '../../dispatcher/dispatcher.ts';
import { type Membership, readMembership, unknownNode } from './cluster-membership.ts';
import type { ProxmoxAccess } from './proxmox-access.ts';
import { CONNECTION_CLASSES, failureClassOf, proxmoxFailure } from './proxmox-failure.ts';
import type { PveApi, PveResource } from './pve-api.ts';

type GuestRow = ActionOutput<typeof proxmoxGuests>['guests'][number];
type StatusPart = 'version' | 'cluster' | 'resources';

const round1 = (value: number) => Math.round(value * 10) / 10;
const percentOf = (part: number, whole: number) => (whole > 0 ? round1((part / whole) * 100) : 0);

/**
 * /cluster/resources always lists the node that answers; an empty list is a
 * token whose ACLs hide everything, which must not pass for an empty cluster.
 */
async function visibleResources(api: PveApi): Promise<PveResource[]> {
  const resources = await api.clusterResources();
  if (resources.length === 0) {
    throw proxmoxFailure('authorization', `the token ${api.tokenId} sees nothing in /cluster/resources, although the node answering is there`, {
      hint: `Give the token audit privileges, such as pveum acl modify / --tokens '${api.tokenId}' --roles PVEAuditor.`,
    });
  }
  return resources;
}

function isGuest(resource: PveResource): resource is PveResource & { type: 'qemu' | 'lxc'; vmid: number } {
  return (resource.type === 'qemu' || resource.type === 'lxc') && typeof resource.vmid === 'number';
}

function guestRow(resource: PveResource & { type: 'qemu' | 'lxc'; vmid: number }): GuestRow {
  return {
    vmid: resource.vmid,
    name: resource.name ?? '',
    node: resource.node ?? '',
    type: resource.type,
    status: resource.status ?? 'unknown',
    template: resource.template ?? false,
    cpu_percent: resource.cpu === undefined ? null : round1(resource.cpu * 100),
    cpus: resource.maxcpu ?? null,
    memory_used_bytes: resource.mem ?? null,
    memory_max_bytes: resource.maxmem ?? null,
    disk_max_bytes: resource.maxdisk ?? null,
    uptime_s: resource.uptime ?? null,
    tags: (resource.tags ?? '').split(/[;,\s]+/).filter((tag) => tag !== ''),
    lock: resource.lock || null,
  };
}

const guestsOf = (resources: PveResource[]): GuestRow[] =>
  resources
    .filter(isGuest)
    .map(guestRow)
    .sort((a, b) => a.vmid - b.vmid);

/** Every guest of the cluster the read token may see, by vmid. */
export async function readGuests(api: PveApi): Promise<GuestRow[]> {
  return guestsOf(await visibleResources(api));
}

function summarizeResources(resources: PveResource[]): NonNullable<ActionOutput<typeof proxmoxStatus>['resources']> {
  const nodes = resources.filter((r) => r.type === 'node');
  const online = nodes.filter((r) => r.status === 'online');
  const guests = resources.filter(isGuest);
  const of = (type: 'qemu' | 'lxc') => guests.filter((g) => g.type === type && !g.template);
  return {
    nodes_total: nodes.length,
    nodes_online: online.length,
    qemu_total: of('qemu').length,
    qemu_running: of('qemu').filter((g) => g.status === 'running').length,
    lxc_total: of('lxc').length,
    lxc_running: of('lxc').filter((g) => g.status === 'running').length,
    templates: guests.filter((g) => g.template).length,
    storage_total: resources.filter((r) => r.type === 'storage').length,
    memory_used_bytes: online.reduce((sum, r) => sum + (r.mem ?? 0), 0),
    memory_total_bytes: online.reduce((sum, r) => sum + (r.maxmem ?? 0), 0),
  };
}

function clusterSummary(membership: Membership): NonNullable<ActionOutput<typeof proxmoxStatus>['cluster']> {
  return {
    name: membership.cluster,
    quorate: membership.quorate,
    nodes_total: membership.nodes.length,
    nodes_online: membership.nodes.filter((n) => n.online).length,
    nodes: membership.nodes.map((n) => ({ name: n.name, node_id: n.nodeId, online: n.online, ip: n.ip, local: n.local })),
  };
}

/** proxmox_status, proxmox_guests and proxmox_node: cluster-wide and per-node reads with the read token. */
export function registerClusterReads(dispatcher: Dispatcher, access: ProxmoxAccess): void {
  dispatcher.register<typeof proxmoxStatus>('proxmox.status', async (_params, context) => {
    const api = access.reader(context);
    const failed: StatusPart[] = [];
    const failures: FleetError[] = [];
    // After a failure of the connection itself, the other parts would fail the same way, one timeout each.
    let stoppedBy: FleetError | undefined;
    const part = async <T>(name: StatusPart, read: () => Promise<T>): Promise<T | null> => {
      if (stoppedBy) {
        failed.push(name);
        return null;
      }
      try {
        return await read();
      } catch (error) {
        if (context.signal.aborted) throw error;
        const failure = toFleetError(error);
        failed.push(name);
        failures.push(failure);
        const failureClass = failureClassOf(failure);
        if (failureClass && CONNECTION_CLASSES.has(failureClass)) stoppedBy = failure;
        return null;
      }
    };
    const version = await part('version', () => api.version());
    const cluster = await part('cluster', async () => {
      const membership = readMembership(await api.clusterStatus(), api.tokenId);
      access.membership.observe(membership);
      return membership;
    });
    const resources = await part('resources', async () => summarizeResources(await visibleResources(api)));
    // Nothing could be read: the call failed, and its first failure says why.
    if (failed.length === 3 && failures[0]) throw failures[0];
    return {
      payload: {
        answered_by_node: cluster?.localNode ?? access.membership.current()?.localNode ?? null,
        endpoint: access.endpoint,
        version: version ? { version: version.version, release: version.release, repoid: version.repoid } : null,
        cluster: cluster ? clusterSummary(cluster) : null,
        resources,
      },
      failedCollectors: failed,
      errors: failures.map((failure) => failure.toInfo()),
    };
  });

  dispatcher.register<typeof proxmoxGuests>('proxmox.guests', async (params, context) => {
    const api = access.reader(context);
    const resources = await visibleResources(api);
    const rows = guestsOf(resources);
    if (params.node !== undefined) {
      const nodes = [...new Set([...resources.filter((r) => r.type === 'node').map((r) => r.node ?? ''), ...rows.map((g) => g.node)])].filter(Boolean);
      if (!nodes.includes(params.node)) throw unknownNode(params.node, nodes);
    }
    const guests = rows
      .filter((g) => (params.node === undefined || g.node === params.node) && (params.status === undefined || g.status === params.status))
      .filter((g) => params.type === undefined || g.type === params.type);
    return { payload: { answered_by_node: await access.membership.answeredBy(api), guests, count: guests.length } };
  });

  dispatcher.register<typeof proxmoxNode>('proxmox.node', async (params, context) => {
    const api = access.reader(context);
    let node = params.node;
    if (node === undefined) node = await access.membership.localNode(api);
    else await access.membership.requireNode(api, node);
    const status = await api.nodeStatus(node);
    const [load1, load5, load15] = status.loadavg.map((value) => Number(value));
    const kernelFromVersion = status.kversion ? (/^\S+ (\S+)/.exec(status.kversion)?.[1] ?? status.kversion) : '';
    return {
      payload: {
        node,
        answered_by_node: await access.membership.answeredBy(api),
        pve_version: status.pveversion,
        kernel: status['current-kernel']?.release ?? kernelFromVersion,
        uptime_s: status.uptime ?? null,
        cpu: {
          usage_percent: round1(status.cpu * 100),
          cores: status.cpuinfo.cores,
          threads: status.cpuinfo.cpus,
          sockets: status.cpuinfo.sockets,
          model: status.cpuinfo.model,
        },
        load: { load_1: load1 ?? 0, load_5: load5 ?? 0, load_15: load15 ?? 0 },
        memory: {
          total_bytes: status.memory.total,
          used_bytes: status.memory.used,
          free_bytes: status.memory.free,
          available_bytes: status.memory.available ?? null,
          usage_percent: percentOf(status.memory.used, status.memory.total),
        },
        swap: status.swap ? { total_bytes: status.swap.total, used_bytes: status.swap.used, free_bytes: status.swap.free } : null,
        rootfs: {
          total_bytes: status.rootfs.total,
          used_bytes: status.rootfs.used,
          available_bytes: status.rootfs.avail,
          usage_percent: percentOf(status.rootfs.used, status.rootfs.total),
        },
      },
    };
  });
}
