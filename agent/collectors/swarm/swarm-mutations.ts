import { serviceProgress } from '../../../shared/domains/swarm/convergence.ts';
import type {
  createConfig,
  createSecret,
  removeConfig,
  removeNetwork,
  removeSecret,
  removeService,
  removeTask,
  removeVolume,
  restartService,
  rollbackService,
  scaleService,
  updateNode,
  updateNodeLabels,
  updateService,
  updateServiceConfigs,
  updateServiceImage,
  updateServiceMounts,
  updateServiceSecrets,
} from '../../../shared/domains/swarm/swarm-actions.ts';
import type { SwarmSnapshot } from '../../../shared/engine/records.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { sleep } from '../../connection/backoff.ts';
import type { CallContext, Dispatcher } from '../../dispatcher/dispatcher.ts';
import { serviceRecord } from '../../engine/engine-records.ts';
import type { EngineJson, SwarmEngine } from './swarm-engine.ts';
import type { SwarmReader } from './swarm-reader.ts';

/** The sections of a service spec and their shapes, loaded with the first call that changes one. */
const sections = () => import('./service-sections.ts');

/** How long a mutation with wait: true blocks at most. */
const WAIT_MS = 60_000;

interface SwarmTools {
  engine: SwarmEngine;
  reader: SwarmReader;
  /** The node id of this engine, to know which tasks are local. */
  localNodeId(): string;
  /** manager, worker, or empty outside a swarm. */
  localRole(): string;
}

/**
 * On a worker the swarm cannot be read, but the engine holds the task's
 * container: the broker sends remove_task here with the task's full id.
 */
export async function removeLocalTask(tools: SwarmTools, taskId: string) {
  const containers: EngineJson[] = await tools.engine.request('GET', '/containers/json', {
    query: { all: true, filters: JSON.stringify({ label: [`com.docker.swarm.task.id=${taskId}`] }) },
  });
  const container = containers[0];
  if (!container) {
    throw new FleetError('not_found', `no container of task ${taskId} on this node`, {
      hint: 'The task may have moved or ended; describe its service for the current tasks.',
    });
  }
  const labels: Record<string, string> = container.Labels ?? {};
  await tools.engine.request('DELETE', `/containers/${container.Id}`, { query: { force: true } });
  const info = await tools.engine.request('GET', '/info');
  return {
    removed: (labels['com.docker.swarm.task.name'] ?? taskId).replace(/\.[a-z0-9]{25}$/, ''),
    service: labels['com.docker.swarm.service.name'] ?? '',
    node: info.Name ?? tools.localNodeId(),
  };
}

/** Cetacean's summary of where a service ended up. */
export function summary(snapshot: SwarmSnapshot, serviceId: string) {
  const service = snapshot.services.find((s) => s.id === serviceId);
  if (!service) throw new FleetError('not_found', `service ${serviceId} is gone`);
  const progress = serviceProgress(service, snapshot.tasks);
  return {
    id: service.id,
    name: service.name,
    image: service.image,
    mode: service.mode,
    ...(service.mode === 'replicated' ? { replicas: service.replicas ?? 0 } : {}),
    running: progress.running,
    state: progress.state,
    version: service.version,
    converged: progress.converged,
  };
}

/** Polls until the service converges, the deadline nears, or the call is cancelled. */
export async function waitForConvergence(tools: SwarmTools, serviceId: string, limitMs: number, context: CallContext) {
  const started = Date.now();
  const until = Math.min(started + limitMs, context.deadlineUnixMs - 500);
  for (;;) {
    const snapshot = await tools.reader.snapshot(true);
    const current = summary(snapshot, serviceId);
    const service = snapshot.services.find((s) => s.id === serviceId);
    const progress = service ? serviceProgress(service, snapshot.tasks) : undefined;
    if (current.converged || Date.now() >= until || context.signal.aborted) {
      return { summary: current, waitedS: Math.round((Date.now() - started) / 100) / 10, reason: current.converged ? undefined : progress?.reason };
    }
    await sleep(Math.min(500, Math.max(0, until - Date.now())), context.signal);
  }
}

async function findService(tools: SwarmTools, wanted: string): Promise<EngineJson> {
  const snapshot = await tools.reader.snapshot();
  const match = snapshot.services.find((s) => s.id === wanted || s.name === wanted || (wanted.length >= 6 && s.id.startsWith(wanted)));
  if (!match) throw new FleetError('not_found', `no service "${wanted}" in this swarm`, { hint: 'find with type service lists them.' });
  return tools.engine.request('GET', `/services/${match.id}`);
}

async function findByName(tools: SwarmTools, kind: 'secrets' | 'configs' | 'networks' | 'nodes', wanted: string): Promise<EngineJson> {
  const items = (await tools.engine.request('GET', `/${kind}`)) as EngineJson[];
  const nameOf = (item: EngineJson) => (kind === 'networks' ? item.Name : kind === 'nodes' ? item.Description?.Hostname : item.Spec?.Name);
  const idOf = (item: EngineJson) => (kind === 'networks' ? item.Id : item.ID);
  const match = items.find((item) => idOf(item) === wanted || nameOf(item) === wanted || (wanted.length >= 6 && String(idOf(item)).startsWith(wanted)));
  if (!match)
    throw new FleetError('not_found', `no ${kind.slice(0, -1)} "${wanted}" in this swarm`, { hint: `find with type ${kind.slice(0, -1)} lists them.` });
  return match;
}

/** Posts a service spec back at the version read (or the one the caller insists on), so a concurrent change is a conflict. */
async function updateSpec(tools: SwarmTools, service: EngineJson, spec: EngineJson, version: number | undefined, extra: Record<string, string> = {}) {
  await tools.engine.request('POST', `/services/${service.ID}/update`, { query: { version: version ?? service.Version.Index, ...extra }, body: spec });
  tools.reader.invalidate();
}

async function converging(tools: SwarmTools, serviceId: string, wait: boolean | undefined, context: CallContext) {
  if (wait) return (await waitForConvergence(tools, serviceId, WAIT_MS, context)).summary;
  return summary(await tools.reader.snapshot(true), serviceId);
}

export function registerSwarmMutations(dispatcher: Dispatcher, tools: SwarmTools): void {
  dispatcher.register<typeof scaleService>('swarm.scale_service', async (params, context) => {
    const service = await findService(tools, params.id);
    if (!service.Spec.Mode?.Replicated) {
      throw new FleetError('invalid_argument', `service ${service.Spec.Name} is ${serviceRecord(service).mode}, not replicated`, {
        hint: 'Only replicated services have a replica count.',
      });
    }
    const spec = structuredClone(service.Spec);
    spec.Mode.Replicated.Replicas = params.replicas;
    await updateSpec(tools, service, spec, params.version);
    return { payload: await converging(tools, service.ID, params.wait, context) };
  });

  dispatcher.register<typeof updateServiceImage>('swarm.update_service_image', async (params, context) => {
    const service = await findService(tools, params.id);
    const spec = structuredClone(service.Spec);
    spec.TaskTemplate.ContainerSpec.Image = params.image;
    await updateSpec(tools, service, spec, params.version);
    return { payload: await converging(tools, service.ID, params.wait, context) };
  });

  dispatcher.register<typeof rollbackService>('swarm.rollback_service', async (params, context) => {
    const service = await findService(tools, params.id);
    if (!service.PreviousSpec) {
      throw new FleetError('conflict', `service ${service.Spec.Name} has no previous spec to roll back to`, {
        hint: 'Only one previous spec is kept; it appears after an update.',
      });
    }
    await updateSpec(tools, service, service.Spec, params.version, { rollback: 'previous' });
    return { payload: await converging(tools, service.ID, params.wait, context) };
  });

  dispatcher.register<typeof restartService>('swarm.restart_service', async (params, context) => {
    const service = await findService(tools, params.id);
    const spec = structuredClone(service.Spec);
    spec.TaskTemplate.ForceUpdate = (spec.TaskTemplate.ForceUpdate ?? 0) + 1;
    await updateSpec(tools, service, spec, params.version);
    return { payload: await converging(tools, service.ID, params.wait, context) };
  });

  dispatcher.register<typeof removeTask>('swarm.remove_task', async (params) => {
    if (tools.localRole() === 'worker') return { payload: await removeLocalTask(tools, params.id) };
    const snapshot = await tools.reader.snapshot(true);
    const task =
      snapshot.tasks.find((t) => t.id === params.id || (params.id.length >= 6 && t.id.startsWith(params.id))) ??
      snapshot.tasks.filter((t) => t.name === params.id && t.desired_state === 'running')[0];
    if (!task) throw new FleetError('not_found', `no task "${params.id}" in this swarm`, { hint: 'describe the service: its related list names its tasks.' });
    const node = snapshot.nodes.find((n) => n.id === task.node_id);
    if (task.node_id !== tools.localNodeId()) {
      throw new FleetError('unsupported', `task ${task.name} runs on node ${node?.hostname ?? task.node_id}, not on this manager`, {
        hint: 'Its container can only be removed on its own node, and no agent runs there; run one on that node, or restart the service instead.',
      });
    }
    if (!task.container_id)
      throw new FleetError('conflict', `task ${task.name} has no container (it is ${task.state})`, {
        hint: 'Swarm reschedules tasks without containers by itself.',
      });
    await tools.engine.request('DELETE', `/containers/${task.container_id}`, { query: { force: true } });
    tools.reader.invalidate();
    return { payload: { removed: task.name, service: task.service_name, node: node?.hostname ?? task.node_id } };
  });

  dispatcher.register<typeof updateService>('swarm.update_service', async (params, context) => {
    const { applySection, sectionDetails } = await sections();
    const service = await findService(tools, params.id);
    const spec = structuredClone(service.Spec);
    applySection(spec, params.section, params.value);
    await updateSpec(tools, service, spec, params.version);
    const converged = params.wait ? (await waitForConvergence(tools, service.ID, WAIT_MS, context)).summary.converged : undefined;
    const after = await tools.engine.request('GET', `/services/${service.ID}`);
    return {
      payload: {
        id: after.ID,
        name: after.Spec.Name,
        version: after.Version.Index,
        section: params.section,
        details: sectionDetails(after.Spec, params.section),
        ...(converged === undefined ? {} : { converged }),
      },
    };
  });

  const references = (kind: 'secrets' | 'configs') => async (params: { id: string; secrets?: EngineJson[]; configs?: EngineJson[]; version?: number }) => {
    const { sectionDetails } = await sections();
    const service = await findService(tools, params.id);
    const wanted = (kind === 'secrets' ? params.secrets : params.configs) ?? [];
    const resolved = await Promise.all(wanted.map(async (ref) => ({ ref, item: await findByName(tools, kind, ref.name) })));
    const spec = structuredClone(service.Spec);
    const entries = resolved.map(({ ref, item }) => ({
      File: { Name: ref.target ?? item.Spec.Name, UID: ref.uid ?? '0', GID: ref.gid ?? '0', Mode: ref.mode ?? 0o444 },
      ...(kind === 'secrets' ? { SecretID: item.ID, SecretName: item.Spec.Name } : { ConfigID: item.ID, ConfigName: item.Spec.Name }),
    }));
    if (kind === 'secrets') spec.TaskTemplate.ContainerSpec.Secrets = entries;
    else spec.TaskTemplate.ContainerSpec.Configs = entries;
    await updateSpec(tools, service, spec, params.version);
    const after = await tools.engine.request('GET', `/services/${service.ID}`);
    return { payload: { id: after.ID, name: after.Spec.Name, version: after.Version.Index, section: kind, details: sectionDetails(after.Spec, kind) } };
  };
  dispatcher.register<typeof updateServiceSecrets>('swarm.update_service_secrets', references('secrets'));
  dispatcher.register<typeof updateServiceConfigs>('swarm.update_service_configs', references('configs'));

  dispatcher.register<typeof updateServiceMounts>('swarm.update_service_mounts', async (params, context) => {
    const service = await findService(tools, params.id);
    const existing = ((service.Spec.TaskTemplate.ContainerSpec.Mounts ?? []) as EngineJson[]).map((m) => ({
      type: m.Type ?? 'volume',
      source: m.Source ?? '',
      target: m.Target,
      options: Boolean(m.BindOptions?.Propagation) || Boolean(m.VolumeOptions?.DriverConfig?.Name && m.VolumeOptions.DriverConfig.Name !== 'local'),
    }));
    if (context.callerLevel < 3) {
      for (const mount of params.mounts) {
        if (mount.type === 'bind') {
          const had = existing.find((m) => m.type === 'bind' && m.source === mount.source && m.target === mount.target);
          if (!had || had.options) {
            throw new FleetError(
              'forbidden',
              `a bind mount of ${mount.source ?? '?'} hands the container the host's filesystem; below level 3 only binds the service already has are kept`,
              {
                hint: had?.options
                  ? 'This bind has a propagation mode the tool cannot set: resending it drops the mode, which needs level 3.'
                  : 'An identity at operations level 3 can add it.',
              },
            );
          }
        }
        if (mount.type === 'volume' && mount.source) {
          const volume = await tools.engine.request('GET', `/volumes/${encodeURIComponent(mount.source)}`).catch(() => undefined);
          if (!volume || (volume.Driver ?? 'local') !== 'local' || Object.keys(volume.Options ?? {}).length > 0) {
            throw new FleetError(
              'forbidden',
              `volume ${mount.source} is not a plain local volume on this manager; a volume with a driver or options can bind the host too`,
              {
                hint: 'Create it as a plain local volume first, or use an identity at operations level 3.',
              },
            );
          }
        }
      }
    }
    const spec = structuredClone(service.Spec);
    spec.TaskTemplate.ContainerSpec.Mounts = params.mounts.map((m) => ({
      Type: m.type,
      ...(m.source ? { Source: m.source } : {}),
      Target: m.target,
      ReadOnly: m.read_only === true,
    }));
    await updateSpec(tools, service, spec, params.version);
    const after = await tools.engine.request('GET', `/services/${service.ID}`);
    const { sectionDetails } = await sections();
    return { payload: { id: after.ID, name: after.Spec.Name, version: after.Version.Index, section: 'mounts', details: sectionDetails(after.Spec, 'mounts') } };
  });

  const create =
    (kind: 'secrets' | 'configs') => async (params: { name: string; data: string; encoding?: 'utf8' | 'base64'; labels?: Record<string, string> }) => {
      let bytes: Buffer;
      if (params.encoding === 'base64') {
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(params.data)) throw new FleetError('invalid_argument', 'data is not base64', { hint: 'Or pass encoding: "utf8".' });
        bytes = Buffer.from(params.data, 'base64');
      } else bytes = Buffer.from(params.data, 'utf8');
      const created = await tools.engine.request('POST', `/${kind}/create`, {
        body: { Name: params.name, Data: bytes.toString('base64'), Labels: params.labels ?? {} },
      });
      tools.reader.invalidate();
      return { payload: { id: created.ID, name: params.name, size_bytes: bytes.length } };
    };
  dispatcher.register<typeof createSecret>('swarm.create_secret', create('secrets'));
  dispatcher.register<typeof createConfig>('swarm.create_config', create('configs'));

  dispatcher.register<typeof updateNodeLabels>('swarm.update_node_labels', async (params) => {
    const node = await findByName(tools, 'nodes', params.id);
    const spec = structuredClone(node.Spec);
    const labels = { ...(spec.Labels ?? {}) } as Record<string, string>;
    for (const [key, value] of Object.entries(params.labels)) {
      if (value === null) delete labels[key];
      else labels[key] = value;
    }
    spec.Labels = labels;
    await tools.engine.request('POST', `/nodes/${node.ID}/update`, { query: { version: params.version ?? node.Version.Index }, body: spec });
    tools.reader.invalidate();
    const after = await tools.engine.request('GET', `/nodes/${node.ID}`);
    return { payload: { id: after.ID, name: after.Description.Hostname, version: after.Version.Index, labels: after.Spec.Labels ?? {} } };
  });

  dispatcher.register<typeof updateNode>('swarm.update_node', async (params) => {
    const node = await findByName(tools, 'nodes', params.id);
    const spec = structuredClone(node.Spec);
    if (params.section === 'availability') {
      if (!['active', 'pause', 'drain'].includes(params.value)) throw new FleetError('invalid_argument', 'availability is active, pause or drain');
      spec.Availability = params.value;
    } else {
      if (!['worker', 'manager'].includes(params.value)) throw new FleetError('invalid_argument', 'role is worker or manager');
      if (params.value === 'worker' && node.Spec.Role === 'manager') {
        const managers = ((await tools.engine.request('GET', '/nodes')) as EngineJson[]).filter((n) => n.Spec?.Role === 'manager');
        const quorum = Math.floor(managers.length / 2) + 1;
        if (managers.length - 1 < quorum) {
          throw new FleetError(
            'conflict',
            `demoting ${node.Description.Hostname} would leave ${managers.length - 1} manager(s), below the quorum of ${quorum}`,
            {
              hint: 'Promote another node first; on a three-manager swarm demote at most one at a time.',
            },
          );
        }
      }
      spec.Role = params.value;
    }
    await tools.engine.request('POST', `/nodes/${node.ID}/update`, { query: { version: params.version ?? node.Version.Index }, body: spec });
    tools.reader.invalidate();
    const after = await tools.engine.request('GET', `/nodes/${node.ID}`);
    return {
      payload: { id: after.ID, name: after.Description.Hostname, version: after.Version.Index, availability: after.Spec.Availability, role: after.Spec.Role },
    };
  });

  dispatcher.register<typeof removeService>('swarm.remove_service', async (params) => {
    const service = await findService(tools, params.id);
    await tools.engine.request('DELETE', `/services/${service.ID}`);
    tools.reader.invalidate();
    return { payload: { removed: service.Spec.Name, type: 'service' } };
  });
  const removePayload = (kind: 'secrets' | 'configs') => async (params: { id: string }) => {
    const item = await findByName(tools, kind, params.id);
    await tools.engine.request('DELETE', `/${kind}/${item.ID}`);
    tools.reader.invalidate();
    return { payload: { removed: item.Spec.Name, type: kind.slice(0, -1) } };
  };
  dispatcher.register<typeof removeSecret>('swarm.remove_secret', removePayload('secrets'));
  dispatcher.register<typeof removeConfig>('swarm.remove_config', removePayload('configs'));
  dispatcher.register<typeof removeNetwork>('swarm.remove_network', async (params) => {
    const network = await findByName(tools, 'networks', params.id);
    if (network.Ingress || network.Name === 'ingress' || network.Name === 'docker_gwbridge') {
      throw new FleetError('invalid_argument', `${network.Name} is part of the swarm's own plumbing and cannot be removed`);
    }
    await tools.engine.request('DELETE', `/networks/${network.Id}`);
    tools.reader.invalidate();
    return { payload: { removed: network.Name, type: 'network' } };
  });
  dispatcher.register<typeof removeVolume>('swarm.remove_volume', async (params) => {
    await tools.engine.request('DELETE', `/volumes/${encodeURIComponent(params.name)}`, { query: { force: params.force === true } });
    tools.reader.invalidate();
    return { payload: { removed: params.name, type: 'volume' } };
  });
}
