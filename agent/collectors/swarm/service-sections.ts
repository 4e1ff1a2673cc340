import { z } from 'zod';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { parseDurationMs } from '../../../shared/options/values.ts';
import { nanosToDuration } from '../../engine/engine-records.ts';
import type { EngineJson } from './swarm-engine.ts';

const duration = z.string().max(32);
const toNanos = (text: string | undefined) => (text === undefined ? undefined : parseDurationMs(text, 'duration') * 1e6);

const policy = z
  .object({
    parallelism: z.number().int().min(0).optional(),
    delay: duration.optional(),
    failure_action: z.enum(['pause', 'continue', 'rollback']).optional(),
    monitor: duration.optional(),
    max_failure_ratio: z.number().min(0).max(1).optional(),
    order: z.enum(['stop-first', 'start-first']).optional(),
  })
  .strict();

/** What each section's value must look like; env and labels are merge patches, the rest replace. */
const SECTION_VALUES = {
  env: z.record(z.string().regex(/^[^=\s]+$/), z.string().nullable()),
  labels: z.record(z.string(), z.string().nullable()),
  resources: z
    .object({
      cpu_limit_cores: z.number().min(0).optional(),
      memory_limit_bytes: z.number().int().min(0).optional(),
      cpu_reservation_cores: z.number().min(0).optional(),
      memory_reservation_bytes: z.number().int().min(0).optional(),
    })
    .strict(),
  placement: z
    .object({
      constraints: z.array(z.string().max(256)).optional(),
      preferences: z.array(z.string().max(256)).optional().describe('spread=node.labels.zone'),
      max_replicas: z.number().int().min(0).optional(),
    })
    .strict(),
  ports: z.array(
    z
      .object({
        target: z.number().int().min(1).max(65_535),
        published: z.number().int().min(1).max(65_535).optional(),
        protocol: z.enum(['tcp', 'udp', 'sctp']).optional(),
        mode: z.enum(['ingress', 'host']).optional(),
      })
      .strict(),
  ),
  'update-policy': policy,
  'rollback-policy': policy,
  'log-driver': z.object({ name: z.string().min(1).max(64), options: z.record(z.string(), z.string()).optional() }).strict(),
  healthcheck: z
    .object({
      test: z.array(z.string()),
      interval: duration.optional(),
      timeout: duration.optional(),
      start_period: duration.optional(),
      retries: z.number().int().min(0).optional(),
    })
    .strict(),
  command: z.object({ command: z.array(z.string()).optional(), args: z.array(z.string()).optional() }).strict(),
} as const;

type Section = keyof typeof SECTION_VALUES;

const ELSEWHERE: Record<string, string> = { secrets: 'update_service_secrets', configs: 'update_service_configs', mounts: 'update_service_mounts' };

function mergePatch(current: Record<string, string>, patch: Record<string, string | null>): Record<string, string> {
  const next = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

function policyToEngine(value: z.infer<typeof policy>): EngineJson {
  return {
    ...(value.parallelism !== undefined ? { Parallelism: value.parallelism } : {}),
    ...(value.delay !== undefined ? { Delay: toNanos(value.delay) } : {}),
    ...(value.failure_action !== undefined ? { FailureAction: value.failure_action } : {}),
    ...(value.monitor !== undefined ? { Monitor: toNanos(value.monitor) } : {}),
    ...(value.max_failure_ratio !== undefined ? { MaxFailureRatio: value.max_failure_ratio } : {}),
    ...(value.order !== undefined ? { Order: value.order } : {}),
  };
}

function policyFromEngine(value: EngineJson) {
  return {
    parallelism: value?.Parallelism ?? null,
    delay: nanosToDuration(value?.Delay),
    failure_action: value?.FailureAction ?? null,
    monitor: nanosToDuration(value?.Monitor),
    max_failure_ratio: value?.MaxFailureRatio ?? null,
    order: value?.Order ?? null,
  };
}

/** Applies one section's new value to a service spec (in place) after checking its shape. */
export function applySection(spec: EngineJson, section: string, value: unknown): void {
  if (ELSEWHERE[section]) {
    throw new FleetError('invalid_argument', `${section} are not a section of update_service`, {
      hint: `Use ${ELSEWHERE[section]}: it takes the complete list.`,
    });
  }
  const schema = SECTION_VALUES[section as Section];
  if (!schema) throw new FleetError('invalid_argument', `unknown section "${section}"`, { hint: `Sections: ${Object.keys(SECTION_VALUES).join(', ')}.` });
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new FleetError('invalid_argument', `value for ${section}: ${issue?.path.join('.') || 'value'}: ${issue?.message}`, {
      hint: "See update_service's description for each section's shape.",
    });
  }
  spec.TaskTemplate ??= {};
  spec.TaskTemplate.ContainerSpec ??= {};
  const container = spec.TaskTemplate.ContainerSpec;
  const v = parsed.data as EngineJson;
  switch (section as Section) {
    case 'env': {
      const current = Object.fromEntries(((container.Env ?? []) as string[]).map((e) => [e.split('=', 1)[0] ?? e, e.slice(e.indexOf('=') + 1)]));
      container.Env = Object.entries(mergePatch(current, v)).map(([k, val]) => `${k}=${val}`);
      return;
    }
    case 'labels':
      spec.Labels = mergePatch(spec.Labels ?? {}, v);
      return;
    case 'resources':
      spec.TaskTemplate.Resources = {
        Limits: {
          ...(v.cpu_limit_cores !== undefined ? { NanoCPUs: Math.round(v.cpu_limit_cores * 1e9) } : {}),
          ...(v.memory_limit_bytes !== undefined ? { MemoryBytes: v.memory_limit_bytes } : {}),
        },
        Reservations: {
          ...(v.cpu_reservation_cores !== undefined ? { NanoCPUs: Math.round(v.cpu_reservation_cores * 1e9) } : {}),
          ...(v.memory_reservation_bytes !== undefined ? { MemoryBytes: v.memory_reservation_bytes } : {}),
        },
      };
      return;
    case 'placement':
      spec.TaskTemplate.Placement = {
        Constraints: v.constraints ?? [],
        Preferences: (v.preferences ?? []).map((p: string) => ({ Spread: { SpreadDescriptor: p.replace(/^spread=/, '') } })),
        ...(v.max_replicas !== undefined ? { MaxReplicas: v.max_replicas } : {}),
      };
      return;
    case 'ports':
      spec.EndpointSpec = {
        ...(spec.EndpointSpec ?? {}),
        Ports: v.map((p: EngineJson) => ({
          TargetPort: p.target,
          PublishedPort: p.published,
          Protocol: p.protocol ?? 'tcp',
          PublishMode: p.mode ?? 'ingress',
        })),
      };
      return;
    case 'update-policy':
      spec.UpdateConfig = policyToEngine(v);
      return;
    case 'rollback-policy':
      spec.RollbackConfig = policyToEngine(v);
      return;
    case 'log-driver':
      spec.TaskTemplate.LogDriver = { Name: v.name, Options: v.options ?? {} };
      return;
    case 'healthcheck':
      container.Healthcheck =
        v.test.length === 0
          ? { Test: ['NONE'] }
          : {
              Test: v.test,
              ...(v.interval ? { Interval: toNanos(v.interval) } : {}),
              ...(v.timeout ? { Timeout: toNanos(v.timeout) } : {}),
              ...(v.start_period ? { StartPeriod: toNanos(v.start_period) } : {}),
              ...(v.retries !== undefined ? { Retries: v.retries } : {}),
            };
      return;
    case 'command':
      container.Command = v.command ?? [];
      container.Args = v.args ?? [];
      return;
  }
}

/** A section as describe shows it: environment variables and driver options by name only. */
export function sectionDetails(spec: EngineJson, section: string): Record<string, unknown> {
  const container = spec.TaskTemplate?.ContainerSpec ?? {};
  switch (section) {
    case 'env':
      return { env_names: ((container.Env ?? []) as string[]).map((e) => e.split('=', 1)[0] ?? e).sort() };
    case 'labels':
      return { labels: spec.Labels ?? {} };
    case 'resources': {
      const r = spec.TaskTemplate?.Resources ?? {};
      return {
        cpu_limit_cores: r.Limits?.NanoCPUs ? r.Limits.NanoCPUs / 1e9 : null,
        memory_limit_bytes: r.Limits?.MemoryBytes ?? null,
        cpu_reservation_cores: r.Reservations?.NanoCPUs ? r.Reservations.NanoCPUs / 1e9 : null,
        memory_reservation_bytes: r.Reservations?.MemoryBytes ?? null,
      };
    }
    case 'placement': {
      const p = spec.TaskTemplate?.Placement ?? {};
      return {
        constraints: p.Constraints ?? [],
        preferences: (p.Preferences ?? []).map((x: EngineJson) => `spread=${x.Spread?.SpreadDescriptor}`),
        max_replicas: p.MaxReplicas ?? null,
      };
    }
    case 'ports':
      return {
        ports: (spec.EndpointSpec?.Ports ?? []).map((p: EngineJson) => ({
          target: p.TargetPort,
          published: p.PublishedPort ?? null,
          protocol: p.Protocol,
          mode: p.PublishMode,
        })),
      };
    case 'update-policy':
      return policyFromEngine(spec.UpdateConfig);
    case 'rollback-policy':
      return policyFromEngine(spec.RollbackConfig);
    case 'log-driver':
      return { name: spec.TaskTemplate?.LogDriver?.Name ?? null, option_names: Object.keys(spec.TaskTemplate?.LogDriver?.Options ?? {}).sort() };
    case 'healthcheck': {
      const h = container.Healthcheck;
      return h && h.Test?.[0] !== 'NONE'
        ? {
            test: h.Test ?? [],
            interval: nanosToDuration(h.Interval),
            timeout: nanosToDuration(h.Timeout),
            start_period: nanosToDuration(h.StartPeriod),
            retries: h.Retries ?? null,
          }
        : { test: [] };
    }
    case 'command':
      return { command: container.Command ?? [], args: container.Args ?? [] };
    case 'secrets':
      return { secrets: (container.Secrets ?? []).map((s: EngineJson) => ({ name: s.SecretName, target: s.File?.Name })) };
    case 'configs':
      return { configs: (container.Configs ?? []).map((c: EngineJson) => ({ name: c.ConfigName, target: c.File?.Name })) };
    case 'mounts':
      return {
        mounts: (container.Mounts ?? []).map((m: EngineJson) => ({ type: m.Type, source: m.Source ?? '', target: m.Target, read_only: m.ReadOnly === true })),
      };
    default:
      return {};
  }
}
