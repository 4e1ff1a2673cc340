import type { GuestRecord } from '../../shared/domains/proxmox/guest-inventory.ts';
import { recentFailures, restartCounts, serviceProgress } from '../../shared/domains/swarm/convergence.ts';
import type {
  ContainerRecord,
  NetworkRecord,
  NodeRecord,
  PayloadRecord,
  ServiceRecord,
  SwarmSnapshot,
  TaskRecord,
  VolumeRecord,
} from '../../shared/engine/records.ts';
import type { Host } from '../agents/agent-registry.ts';
import type { FleetIndex } from './fleet-index.ts';
import { agentOnNode, type Resource } from './index-resources.ts';

type Related = { type: string; id: string; name: string; relation?: string; host?: string };

interface Digest {
  id: string;
  name: string;
  type: string;
  state: string;
  reason?: string;
  since_unix_ms: number | null;
  details: Record<string, unknown>;
  related: Related[];
  recent_failures: ReturnType<typeof recentFailures>;
  restarts?: { last_hour: number; last_week: number };
  host?: string;
  cluster?: string;
}

const nodeHost = (snapshot: SwarmSnapshot, id: string) => snapshot.nodes.find((n) => n.id === id)?.hostname ?? id;

function serviceDigest(service: ServiceRecord, snapshot: SwarmSnapshot, hosts: readonly Host[], index: FleetIndex, now: number): Digest {
  const progress = serviceProgress(service, snapshot.tasks);
  const live = snapshot.tasks.filter((t) => t.service_id === service.id && t.desired_state === 'running');
  const failing = live.filter((t) => t.state !== 'running').sort((a, b) => a.timestamp_unix_ms - b.timestamp_unix_ms)[0];
  const networks = new Map(snapshot.networks.map((n) => [n.id, n.name]));
  const related: Related[] = [
    ...live.map((t) => {
      const host = agentOnNode(hosts, t.node_id);
      return { type: 'task', id: t.id, name: t.name, relation: `task (${t.state}) on ${nodeHost(snapshot, t.node_id)}`, ...(host ? { host: host.name } : {}) };
    }),
    ...[...new Set(live.map((t) => t.node_id))].map((id) => ({ type: 'node', id, name: nodeHost(snapshot, id), relation: 'runs_on' })),
    ...service.networks.map((id) => ({ type: 'network', id, name: networks.get(id) ?? id, relation: 'attached_to' })),
    ...service.secrets.map((s) => ({ type: 'secret', id: s.id, name: s.name, relation: 'uses' })),
    ...service.configs.map((c) => ({ type: 'config', id: c.id, name: c.name, relation: 'uses' })),
    ...(service.stack ? [{ type: 'stack', id: service.stack, name: service.stack, relation: 'member_of' }] : []),
  ];
  return {
    id: service.id,
    name: service.name,
    type: 'service',
    state: progress.state,
    ...(progress.reason && !progress.converged ? { reason: progress.reason } : {}),
    since_unix_ms: failing?.timestamp_unix_ms ?? service.updated_unix_ms,
    details: {
      image: service.image,
      mode: service.mode,
      ...(service.mode === 'replicated' ? { replicas: service.replicas } : {}),
      desired: progress.desired,
      running: progress.running,
      converged: progress.converged,
      version: service.version,
      stack: service.stack,
      ports: service.ports,
      constraints: service.constraints,
      preferences: service.preferences,
      max_replicas: service.max_replicas,
      ...service.resources,
      env_names: service.env_names,
      healthcheck: service.healthcheck,
      healthcheck_interval: service.healthcheck?.interval ?? null,
      restart_policy: service.restart_policy,
      update_status: service.update_status,
      mounts: service.mounts.map(({ has_options: _o, ...m }) => m),
      log_driver: service.log_driver,
      labels: service.labels,
      command: service.command,
      args: service.args,
    },
    related,
    recent_failures: recentFailures(service, snapshot.tasks, (id) => nodeHost(snapshot, id)),
    restarts: restartCounts(service, snapshot.tasks, now, index.taskFailures(service.id, now - 7 * 86_400_000)),
    cluster: snapshot.cluster_name,
  };
}

function taskDigest(task: TaskRecord, snapshot: SwarmSnapshot, hosts: readonly Host[]): Digest {
  const host = agentOnNode(hosts, task.node_id);
  const unhealthy = task.desired_state === 'running' && task.state !== 'running';
  return {
    id: task.id,
    name: task.name,
    type: 'task',
    state: task.state,
    ...(unhealthy || task.error ? { reason: task.error || task.message } : {}),
    since_unix_ms: task.timestamp_unix_ms,
    details: {
      service: task.service_name,
      slot: task.slot,
      node: nodeHost(snapshot, task.node_id),
      desired_state: task.desired_state,
      exit_code: task.exit_code,
      image: task.image,
      message: task.message,
    },
    related: [
      { type: 'service', id: task.service_id, name: task.service_name, relation: 'task_of' },
      { type: 'node', id: task.node_id, name: nodeHost(snapshot, task.node_id), relation: 'runs_on' },
      ...(task.container_id
        ? [
            {
              type: 'container',
              id: task.container_id.slice(0, 12),
              name: task.container_id.slice(0, 12),
              relation: 'container',
              ...(host ? { host: host.name } : {}),
            },
          ]
        : []),
    ],
    recent_failures: [],
    ...(host ? { host: host.name } : {}),
    cluster: snapshot.cluster_name,
  };
}

function nodeDigest(node: NodeRecord, snapshot: SwarmSnapshot, hosts: readonly Host[]): Digest {
  const services = new Map<string, string>();
  for (const task of snapshot.tasks.filter((t) => t.node_id === node.id && t.desired_state === 'running')) services.set(task.service_id, task.service_name);
  const agent = agentOnNode(hosts, node.id);
  return {
    id: node.id,
    name: node.hostname,
    type: 'node',
    state: node.state,
    since_unix_ms: node.updated_unix_ms,
    details: {
      role: node.role,
      availability: node.availability,
      addr: node.addr,
      leader: node.leader,
      reachability: node.reachability,
      cpu_cores: node.cpu_cores,
      memory_bytes: node.memory_bytes,
      engine_version: node.engine_version,
      os: node.os,
      arch: node.arch,
      labels: node.labels,
      version: node.version,
    },
    related: [
      ...[...services].map(([id, name]) => ({ type: 'service', id, name, relation: 'runs' })),
      ...(agent ? [{ type: 'host', id: agent.id, name: agent.name, relation: 'agent', host: agent.name }] : []),
    ],
    recent_failures: [],
    ...(agent ? { host: agent.name } : {}),
    cluster: snapshot.cluster_name,
  };
}

function usersOf(snapshot: SwarmSnapshot, test: (s: ServiceRecord) => boolean): Related[] {
  return snapshot.services.filter(test).map((s) => ({ type: 'service', id: s.id, name: s.name, relation: 'used_by' }));
}

function hostDigest(host: Host, index: FleetIndex): Digest {
  const containers = index.inventory(host.id)?.inventory.containers ?? [];
  const nodeId = host.hello?.facts.swarm_node_id;
  return {
    id: host.id,
    name: host.name,
    type: 'host',
    state: host.state,
    since_unix_ms: host.stateSince,
    details: {
      version: host.version,
      labels: host.labels,
      collectors: host.hello?.collectors ?? [],
      facts: host.hello?.facts ?? {},
      sample: host.sample,
      last_seen_unix_ms: host.lastSeenAt,
    },
    related: [
      ...containers.map((c) => ({ type: 'container', id: c.id.slice(0, 12), name: c.name, relation: 'runs', host: host.name })),
      ...(typeof nodeId === 'string' && nodeId
        ? [{ type: 'node', id: nodeId, name: String(host.hello?.facts.hostname ?? nodeId), relation: 'swarm node' }]
        : []),
    ],
    recent_failures: [],
    host: host.name,
  };
}

function containerDigest(container: ContainerRecord, host: Host, index: FleetIndex, now: number): Digest {
  const events = index.containerEvents;
  const inventoryAt = index.inventory(host.id)?.receivedAt ?? 0;
  return {
    id: container.id.slice(0, 12),
    name: container.name,
    type: 'container',
    // An engine event newer than the last inventory tells the state first.
    state: events.stateSince(host.id, container.id, inventoryAt) ?? container.state,
    since_unix_ms: container.created_unix_ms,
    details: { image: container.image, status: container.status, labels: container.labels, created_unix_ms: container.created_unix_ms },
    related: [
      { type: 'host', id: host.id, name: host.name, relation: 'runs_on', host: host.name },
      ...(container.service_name ? [{ type: 'service', id: container.service_name, name: container.service_name, relation: 'task_of' }] : []),
      ...(container.task_id
        ? [{ type: 'task', id: container.task_id, name: container.task_name?.replace(/\.[a-z0-9]{25}$/, '') ?? container.task_id, relation: 'task' }]
        : []),
    ],
    recent_failures: events.recentFailures(host.id, host.name, container.id),
    restarts: events.restarts(host.id, container.id, now),
    host: host.name,
  };
}

/** The Digest of one resource (Cetacean's detail view), from the index. */
export function digestOf(resource: Resource, hosts: readonly Host[], index: FleetIndex, now = Date.now()): Digest {
  const { row, snapshot } = resource;
  switch (row.type) {
    case 'service':
      return serviceDigest(resource.record as ServiceRecord, snapshot as SwarmSnapshot, hosts, index, now);
    case 'task':
      return taskDigest(resource.record as TaskRecord, snapshot as SwarmSnapshot, hosts);
    case 'node':
      return nodeDigest(resource.record as NodeRecord, snapshot as SwarmSnapshot, hosts);
    case 'host':
      return hostDigest(resource.host as Host, index);
    case 'container':
      return containerDigest(resource.record as ContainerRecord, resource.host as Host, index, now);
    case 'sandbox': {
      const container = resource.record as ContainerRecord;
      const host = resource.host as Host;
      return {
        id: row.id,
        name: row.name,
        type: 'sandbox',
        state: row.state ?? container.state,
        since_unix_ms: container.created_unix_ms,
        details: {
          container: container.name,
          image: container.image,
          status: container.status,
          runtime_dir: container.labels['fleetmesh.sandbox.runtime-dir'] ?? '/run/ephemeral-os',
        },
        related: [
          { type: 'container', id: container.id.slice(0, 12), name: container.name, relation: 'runs_in', host: host.name },
          { type: 'host', id: host.id, name: host.name, relation: 'runs_on', host: host.name },
        ],
        recent_failures: [],
        host: host.name,
      };
    }
    case 'guest': {
      const guest = resource.record as GuestRecord & { reported_by: string };
      const host = resource.host as Host;
      const onNode = host.hello?.facts.proxmox_node === guest.node;
      return {
        id: row.id,
        name: row.name,
        type: 'guest',
        state: row.state ?? guest.status,
        since_unix_ms: guest.status === 'running' && guest.uptime_s !== null ? now - guest.uptime_s * 1000 : null,
        details: {
          vmid: guest.vmid,
          guest_type: guest.type,
          node: guest.node,
          status: guest.status,
          template: guest.template,
          cpu_percent: guest.cpu_percent,
          cpus: guest.cpus,
          memory_used_bytes: guest.memory_used_bytes,
          memory_max_bytes: guest.memory_max_bytes,
          disk_max_bytes: guest.disk_max_bytes,
          uptime_s: guest.uptime_s,
          tags: guest.tags,
          lock: guest.lock,
          reported_by: guest.reported_by,
        },
        related: [{ type: 'host', id: host.id, name: host.name, relation: onNode ? 'runs_on' : 'reported_by', host: host.name }],
        recent_failures: [],
        host: host.name,
        ...(row.cluster ? { cluster: row.cluster } : {}),
      };
    }
    case 'stack': {
      const members = (snapshot as SwarmSnapshot).services.filter((s) => s.stack === row.name);
      const progress = members.map((s) => ({ s, p: serviceProgress(s, (snapshot as SwarmSnapshot).tasks) }));
      const stuck = progress.filter((x) => !x.p.converged);
      return {
        id: row.name,
        name: row.name,
        type: 'stack',
        state: row.state ?? 'running',
        ...(stuck.length ? { reason: stuck.map((x) => `${x.s.name}: ${x.p.running}/${x.p.desired} ${x.p.state}`).join('; ') } : {}),
        since_unix_ms: Math.max(0, ...members.map((s) => s.updated_unix_ms)) || null,
        details: { services: members.length, converged: progress.length - stuck.length },
        related: [
          ...members.map((s) => ({ type: 'service', id: s.id, name: s.name, relation: 'member' })),
          ...(snapshot as SwarmSnapshot).networks
            .filter((n) => n.stack === row.name)
            .map((n) => ({ type: 'network', id: n.id, name: n.name, relation: 'member' })),
          ...(snapshot as SwarmSnapshot).configs
            .filter((c) => c.stack === row.name)
            .map((c) => ({ type: 'config', id: c.id, name: c.name, relation: 'member' })),
          ...(snapshot as SwarmSnapshot).secrets
            .filter((c) => c.stack === row.name)
            .map((c) => ({ type: 'secret', id: c.id, name: c.name, relation: 'member' })),
        ],
        recent_failures: [],
        cluster: (snapshot as SwarmSnapshot).cluster_name,
      };
    }
    case 'network': {
      const network = resource.record as NetworkRecord;
      return {
        id: network.id,
        name: network.name,
        type: 'network',
        state: 'present',
        since_unix_ms: null,
        details: {
          driver: network.driver,
          scope: network.scope,
          attachable: network.attachable,
          ingress: network.ingress,
          labels: network.labels,
          stack: network.stack,
        },
        related: usersOf(snapshot as SwarmSnapshot, (s) => s.networks.includes(network.id)),
        recent_failures: [],
        cluster: (snapshot as SwarmSnapshot).cluster_name,
      };
    }
    case 'config':
    case 'secret': {
      const item = resource.record as PayloadRecord;
      const key = row.type === 'config' ? 'configs' : 'secrets';
      return {
        id: item.id,
        name: item.name,
        type: row.type,
        state: 'present',
        since_unix_ms: item.updated_unix_ms,
        // A config's size in bytes; a secret's payload is never read, not even its length.
        details: {
          labels: item.labels,
          stack: item.stack,
          created_unix_ms: item.created_unix_ms,
          ...(row.type === 'config' ? { size_bytes: item.size_bytes } : {}),
        },
        related: usersOf(snapshot as SwarmSnapshot, (s) => s[key].some((ref) => ref.id === item.id)),
        recent_failures: [],
        cluster: (snapshot as SwarmSnapshot).cluster_name,
      };
    }
    default: {
      const volume = resource.record as VolumeRecord;
      return {
        id: volume.name,
        name: volume.name,
        type: 'volume',
        state: 'present',
        since_unix_ms: null,
        details: { driver: volume.driver, scope: volume.scope, labels: volume.labels, stack: volume.stack },
        related: resource.host ? [{ type: 'host', id: resource.host.id, name: resource.host.name, relation: 'on', host: resource.host.name }] : [],
        recent_failures: [],
        ...(resource.host ? { host: resource.host.name } : {}),
      };
    }
  }
}
