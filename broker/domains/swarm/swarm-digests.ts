import { recentFailures, restartCounts, serviceProgress } from '../../../shared/domains/swarm/convergence.ts';
import type { NetworkRecord, NodeRecord, PayloadRecord, ServiceRecord, SwarmSnapshot, TaskRecord } from '../../../shared/engine/records.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { Digest, Related, Resource } from '../../index/resource.ts';
import { agentOnNode, nodeName } from './swarm-nodes.ts';

/** When a service's tasks ended involuntarily since a time (the indexer keeps them). */
export type TaskFailures = (serviceId: string, sinceUnixMs: number) => number[];

function serviceDigest(service: ServiceRecord, snapshot: SwarmSnapshot, hosts: readonly Host[], failures: TaskFailures, now: number): Digest {
  const progress = serviceProgress(service, snapshot.tasks);
  const live = snapshot.tasks.filter((t) => t.service_id === service.id && t.desired_state === 'running');
  const failing = live.filter((t) => t.state !== 'running').sort((a, b) => a.timestamp_unix_ms - b.timestamp_unix_ms)[0];
  const networks = new Map(snapshot.networks.map((n) => [n.id, n.name]));
  const related: Related[] = [
    ...live.map((t) => {
      const host = agentOnNode(hosts, t.node_id);
      return { type: 'task', id: t.id, name: t.name, relation: `task (${t.state}) on ${nodeName(snapshot, t.node_id)}`, ...(host ? { host: host.name } : {}) };
    }),
    ...[...new Set(live.map((t) => t.node_id))].map((id) => ({ type: 'node', id, name: nodeName(snapshot, id), relation: 'runs_on' })),
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
    recent_failures: recentFailures(service, snapshot.tasks, (id) => nodeName(snapshot, id)),
    restarts: restartCounts(service, snapshot.tasks, now, failures(service.id, now - 7 * 86_400_000)),
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
      node: nodeName(snapshot, task.node_id),
      desired_state: task.desired_state,
      exit_code: task.exit_code,
      image: task.image,
      message: task.message,
    },
    related: [
      { type: 'service', id: task.service_id, name: task.service_name, relation: 'task_of' },
      { type: 'node', id: task.node_id, name: nodeName(snapshot, task.node_id), relation: 'runs_on' },
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

/** The digest of one resource of a swarm (Cetacean's detail view), from its snapshot. */
export function swarmDigest(resource: Resource, snapshot: SwarmSnapshot, hosts: readonly Host[], failures: TaskFailures, now: number): Digest {
  const { row } = resource;
  switch (row.type) {
    case 'service':
      return serviceDigest(resource.record as ServiceRecord, snapshot, hosts, failures, now);
    case 'task':
      return taskDigest(resource.record as TaskRecord, snapshot, hosts);
    case 'node':
      return nodeDigest(resource.record as NodeRecord, snapshot, hosts);
    case 'stack': {
      const members = snapshot.services.filter((s) => s.stack === row.name);
      const progress = members.map((s) => ({ s, p: serviceProgress(s, snapshot.tasks) }));
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
          ...snapshot.networks.filter((n) => n.stack === row.name).map((n) => ({ type: 'network', id: n.id, name: n.name, relation: 'member' })),
          ...snapshot.configs.filter((c) => c.stack === row.name).map((c) => ({ type: 'config', id: c.id, name: c.name, relation: 'member' })),
          ...snapshot.secrets.filter((c) => c.stack === row.name).map((c) => ({ type: 'secret', id: c.id, name: c.name, relation: 'member' })),
        ],
        recent_failures: [],
        cluster: snapshot.cluster_name,
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
        cluster: snapshot.cluster_name,
      };
    }
    default: {
      // A config or a secret.
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
        cluster: snapshot.cluster_name,
      };
    }
  }
}
