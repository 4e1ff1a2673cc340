import type {
  ContainerRecord,
  NetworkRecord,
  NodeRecord,
  PayloadRecord,
  ServiceMode,
  ServiceRecord,
  TaskRecord,
  VolumeRecord,
} from '../../shared/engine/records.ts';
import { STACK_LABEL } from '../../shared/engine/records.ts';
import { unixMs } from './engine-time.ts';

/**
 * Docker API objects → our compact records. The engine's objects are loosely
 * typed here on purpose: only the fields read below are relied on, and every
 * one has a fallback. Environment values and secret payloads are never copied.
 */
// biome-ignore lint/suspicious/noExplicitAny: engine objects are read defensively field by field
type Engine = any;

/** Nanoseconds as Docker stores durations → "10s", "1m30s". */
export function nanosToDuration(ns: number | undefined | null): string | null {
  if (!ns) return null;
  const ms = Math.round(ns / 1e6);
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

function mode(spec: Engine): ServiceMode {
  if (spec?.Mode?.Global) return 'global';
  if (spec?.Mode?.ReplicatedJob) return 'replicated-job';
  if (spec?.Mode?.GlobalJob) return 'global-job';
  return 'replicated';
}

function stackOf(labels: Record<string, string> | undefined): string | null {
  return labels?.[STACK_LABEL] ?? null;
}

export function serviceRecord(service: Engine): ServiceRecord {
  const spec = service.Spec ?? {};
  const container = spec.TaskTemplate?.ContainerSpec ?? {};
  const resources = spec.TaskTemplate?.Resources ?? {};
  const health = container.Healthcheck;
  const restart = spec.TaskTemplate?.RestartPolicy;
  const labels = (spec.Labels ?? {}) as Record<string, string>;
  return {
    id: service.ID,
    name: spec.Name ?? service.ID,
    version: service.Version?.Index ?? 0,
    created_unix_ms: unixMs(service.CreatedAt) ?? 0,
    updated_unix_ms: unixMs(service.UpdatedAt) ?? 0,
    image: String(container.Image ?? '').replace(/@sha256:[0-9a-f]+$/, ''),
    mode: mode(spec),
    replicas: spec.Mode?.Replicated ? (spec.Mode.Replicated.Replicas ?? 1) : null,
    labels,
    stack: stackOf(labels),
    env_names: ((container.Env ?? []) as string[]).map((e) => e.split('=', 1)[0] ?? e).sort(),
    command: (container.Command ?? []) as string[],
    args: (container.Args ?? []) as string[],
    ports: ((spec.EndpointSpec?.Ports ?? []) as Engine[]).map((p) => ({
      target: p.TargetPort,
      published: p.PublishedPort ?? null,
      protocol: p.Protocol ?? 'tcp',
      mode: p.PublishMode ?? 'ingress',
    })),
    networks: ((spec.TaskTemplate?.Networks ?? spec.Networks ?? []) as Engine[]).map((n) => n.Target),
    secrets: ((container.Secrets ?? []) as Engine[]).map((s) => ({ id: s.SecretID, name: s.SecretName, target: s.File?.Name ?? s.SecretName })),
    configs: ((container.Configs ?? []) as Engine[]).map((c) => ({ id: c.ConfigID, name: c.ConfigName, target: c.File?.Name ?? c.ConfigName })),
    mounts: ((container.Mounts ?? []) as Engine[]).map((m) => ({
      type: m.Type ?? 'volume',
      source: m.Source ?? '',
      target: m.Target,
      read_only: m.ReadOnly === true,
      has_options: Boolean(m.VolumeOptions?.DriverConfig?.Name && m.VolumeOptions.DriverConfig.Name !== 'local') || Boolean(m.BindOptions?.Propagation),
    })),
    constraints: (spec.TaskTemplate?.Placement?.Constraints ?? []) as string[],
    preferences: ((spec.TaskTemplate?.Placement?.Preferences ?? []) as Engine[]).map((p) =>
      p.Spread ? `spread=${p.Spread.SpreadDescriptor}` : JSON.stringify(p),
    ),
    max_replicas: spec.TaskTemplate?.Placement?.MaxReplicas || null,
    resources: {
      cpu_limit_cores: resources.Limits?.NanoCPUs ? resources.Limits.NanoCPUs / 1e9 : null,
      memory_limit_bytes: resources.Limits?.MemoryBytes || null,
      cpu_reservation_cores: resources.Reservations?.NanoCPUs ? resources.Reservations.NanoCPUs / 1e9 : null,
      memory_reservation_bytes: resources.Reservations?.MemoryBytes || null,
    },
    healthcheck:
      health && Array.isArray(health.Test) && health.Test.length && health.Test[0] !== 'NONE'
        ? {
            test: health.Test,
            interval: nanosToDuration(health.Interval),
            timeout: nanosToDuration(health.Timeout),
            start_period: nanosToDuration(health.StartPeriod),
            retries: health.Retries ?? null,
          }
        : null,
    restart_policy: restart
      ? {
          condition: restart.Condition ?? 'any',
          delay: nanosToDuration(restart.Delay),
          max_attempts: restart.MaxAttempts ?? null,
          window: nanosToDuration(restart.Window),
        }
      : null,
    update_status: service.UpdateStatus
      ? {
          state: service.UpdateStatus.State ?? '',
          message: service.UpdateStatus.Message ?? '',
          started_unix_ms: unixMs(service.UpdateStatus.StartedAt),
          completed_unix_ms: unixMs(service.UpdateStatus.CompletedAt),
        }
      : null,
    log_driver: spec.TaskTemplate?.LogDriver
      ? { name: spec.TaskTemplate.LogDriver.Name, option_names: Object.keys(spec.TaskTemplate.LogDriver.Options ?? {}).sort() }
      : null,
    has_previous_spec: Boolean(service.PreviousSpec),
    desired_tasks: service.ServiceStatus?.DesiredTasks ?? null,
    running_tasks: service.ServiceStatus?.RunningTasks ?? null,
  };
}

export function taskRecord(task: Engine, serviceNames: Map<string, string>): TaskRecord {
  const serviceName = serviceNames.get(task.ServiceID) ?? task.ServiceID;
  const slot = typeof task.Slot === 'number' && task.Slot > 0 ? task.Slot : null;
  return {
    id: task.ID,
    service_id: task.ServiceID,
    service_name: serviceName,
    name: slot !== null ? `${serviceName}.${slot}` : `${serviceName}.${task.NodeID ?? ''}`,
    slot,
    node_id: task.NodeID ?? '',
    state: task.Status?.State ?? 'unknown',
    desired_state: task.DesiredState ?? '',
    message: task.Status?.Message ?? '',
    error: task.Status?.Err ?? '',
    exit_code: typeof task.Status?.ContainerStatus?.ExitCode === 'number' ? task.Status.ContainerStatus.ExitCode : null,
    timestamp_unix_ms: unixMs(task.Status?.Timestamp) ?? 0,
    created_unix_ms: unixMs(task.CreatedAt) ?? 0,
    container_id: task.Status?.ContainerStatus?.ContainerID ?? null,
    image: String(task.Spec?.ContainerSpec?.Image ?? '').replace(/@sha256:[0-9a-f]+$/, ''),
    service_version: task.Version?.Index ?? null,
  };
}

export function nodeRecord(node: Engine): NodeRecord {
  return {
    id: node.ID,
    hostname: node.Description?.Hostname ?? node.ID,
    role: node.Spec?.Role === 'manager' ? 'manager' : 'worker',
    availability: node.Spec?.Availability ?? 'active',
    state: node.Status?.State ?? 'unknown',
    addr: node.Status?.Addr ?? '',
    leader: node.ManagerStatus?.Leader === true,
    reachability: node.ManagerStatus?.Reachability ?? null,
    labels: node.Spec?.Labels ?? {},
    engine_labels: node.Description?.Engine?.Labels ?? {},
    cpu_cores: (node.Description?.Resources?.NanoCPUs ?? 0) / 1e9,
    memory_bytes: node.Description?.Resources?.MemoryBytes ?? 0,
    engine_version: node.Description?.Engine?.EngineVersion ?? '',
    os: node.Description?.Platform?.OS ?? '',
    arch: node.Description?.Platform?.Architecture ?? '',
    version: node.Version?.Index ?? 0,
    updated_unix_ms: unixMs(node.UpdatedAt) ?? 0,
  };
}

export function networkRecord(network: Engine): NetworkRecord {
  const labels = (network.Labels ?? {}) as Record<string, string>;
  return {
    id: network.Id,
    name: network.Name,
    driver: network.Driver ?? '',
    scope: network.Scope ?? '',
    attachable: network.Attachable === true,
    ingress: network.Ingress === true,
    labels,
    stack: stackOf(labels),
  };
}

export function payloadRecord(item: Engine, withSize: boolean): PayloadRecord {
  const labels = (item.Spec?.Labels ?? {}) as Record<string, string>;
  return {
    id: item.ID,
    name: item.Spec?.Name ?? item.ID,
    labels,
    created_unix_ms: unixMs(item.CreatedAt) ?? 0,
    updated_unix_ms: unixMs(item.UpdatedAt) ?? 0,
    stack: stackOf(labels),
    // A config's size in bytes; a secret's payload is never read, not even its length.
    size_bytes: withSize && typeof item.Spec?.Data === 'string' ? Buffer.from(item.Spec.Data, 'base64').length : null,
  };
}

export function volumeRecord(volume: Engine): VolumeRecord {
  const labels = (volume.Labels ?? {}) as Record<string, string>;
  return {
    name: volume.Name,
    driver: volume.Driver ?? 'local',
    scope: volume.Scope ?? 'local',
    labels,
    stack: stackOf(labels),
    has_options: Object.keys(volume.Options ?? {}).length > 0,
  };
}

/** `restartCount` is the engine's, from the container's inspect (the list endpoint does not give it). */
export function containerRecord(container: Engine, sandboxLabel = 'fleetmesh.sandbox', restartCount?: number): ContainerRecord {
  const labels = (container.Labels ?? {}) as Record<string, string>;
  return {
    id: container.Id,
    name: (container.Names?.[0] ?? container.Id.slice(0, 12)).replace(/^\//, ''),
    image: container.Image ?? '',
    state: container.State ?? '',
    status: container.Status ?? '',
    created_unix_ms: (container.Created ?? 0) * 1000,
    ...(restartCount === undefined ? {} : { restart_count: restartCount }),
    labels,
    service_name: labels['com.docker.swarm.service.name'] ?? null,
    task_id: labels['com.docker.swarm.task.id'] ?? null,
    task_name: labels['com.docker.swarm.task.name'] ?? null,
    stack: stackOf(labels),
    sandbox_id: labels[sandboxLabel] || null,
  };
}
