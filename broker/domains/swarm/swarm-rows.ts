import { serviceProgress } from '../../../shared/domains/swarm/convergence.ts';
import type { ServiceRecord, SwarmSnapshot, TaskRecord } from '../../../shared/engine/records.ts';
import { passes, type Resource, type RowFilter, wantsType } from '../../index/resource.ts';
import { nodeName } from './swarm-nodes.ts';

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
    group: snapshot.cluster_id,
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
    group: snapshot.cluster_id,
    parents: [{ type: 'service', name: task.service_name }],
  };
}

/** Every resource of one swarm's snapshot the filter asks for: few enough to build whole, then keep. */
export function swarmRows(snapshot: SwarmSnapshot, filter: RowFilter): Resource[] {
  const group = snapshot.cluster_id;
  const cluster = snapshot.cluster_name;
  const resources: Resource[] = [];
  const stacks = new Map<string, ServiceRecord[]>();
  for (const service of snapshot.services) {
    if (wantsType(filter, 'service')) resources.push(serviceRow(service, snapshot));
    if (service.stack) stacks.set(service.stack, [...(stacks.get(service.stack) ?? []), service]);
  }
  if (wantsType(filter, 'task')) {
    const stackOf = new Map(snapshot.services.map((s) => [s.id, s.stack]));
    for (const task of snapshot.tasks) resources.push(taskRow(task, snapshot, stackOf.get(task.service_id) ?? null));
  }
  for (const node of wantsType(filter, 'node') ? snapshot.nodes : []) {
    resources.push({
      row: { id: node.id, name: node.hostname, type: 'node', state: node.state, detail: `${node.role}, ${node.availability}`, cluster },
      record: node,
      labels: node.labels,
      node: node.hostname,
      group,
    });
  }
  for (const [name, members] of wantsType(filter, 'stack') ? stacks : []) {
    const progress = members.map((s) => serviceProgress(s, snapshot.tasks));
    resources.push({
      row: {
        id: name,
        name,
        type: 'stack',
        state: progress.every((p) => p.converged) ? 'running' : 'degraded',
        desired: members.length,
        cluster,
      },
      record: { name, services: members.map((s) => s.name) },
      labels: {},
      group,
      parents: members.map((s) => ({ type: 'service', name: s.name })),
    });
  }
  for (const network of wantsType(filter, 'network') ? snapshot.networks : []) {
    resources.push({
      row: { id: network.id, name: network.name, type: 'network', ...(network.stack ? { stack: network.stack } : {}), detail: network.driver, cluster },
      record: network,
      labels: network.labels,
      group,
    });
  }
  for (const [kind, items] of [
    ['config', snapshot.configs],
    ['secret', snapshot.secrets],
  ] as const) {
    for (const item of wantsType(filter, kind) ? items : []) {
      resources.push({
        row: {
          id: item.id,
          name: item.name,
          type: kind,
          ...(item.stack ? { stack: item.stack } : {}),
          ...(item.size_bytes !== null ? { detail: `${item.size_bytes} bytes` } : {}),
          cluster,
        },
        record: item,
        labels: item.labels,
        group,
      });
    }
  }
  return filter.match ? resources.filter((resource) => passes(filter, resource)) : resources;
}
