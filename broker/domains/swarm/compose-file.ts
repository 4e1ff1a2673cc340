import { stringify } from 'yaml';
import type { ServiceRecord, SwarmSnapshot } from '../../../shared/engine/records.ts';

type Spec = Record<string, unknown>;

function serviceSpec(service: ServiceRecord, snapshot: SwarmSnapshot): Spec {
  const networks = new Map(snapshot.networks.map((n) => [n.id, n.name]));
  const { resources } = service;
  const limits = {
    ...(resources.cpu_limit_cores !== null ? { cpus: String(resources.cpu_limit_cores) } : {}),
    ...(resources.memory_limit_bytes !== null ? { memory: `${resources.memory_limit_bytes}b` } : {}),
  };
  const reservations = {
    ...(resources.cpu_reservation_cores !== null ? { cpus: String(resources.cpu_reservation_cores) } : {}),
    ...(resources.memory_reservation_bytes !== null ? { memory: `${resources.memory_reservation_bytes}b` } : {}),
  };
  const labels = Object.fromEntries(Object.entries(service.labels).filter(([key]) => !key.startsWith('com.docker.stack.')));
  const deploy: Spec = {
    mode: service.mode,
    ...(service.replicas !== null && service.mode.startsWith('replicated') ? { replicas: service.replicas } : {}),
    ...(Object.keys(labels).length ? { labels } : {}),
    ...(Object.keys(limits).length || Object.keys(reservations).length
      ? { resources: { ...(Object.keys(limits).length ? { limits } : {}), ...(Object.keys(reservations).length ? { reservations } : {}) } }
      : {}),
    ...(service.constraints.length || service.preferences.length || service.max_replicas !== null
      ? {
          placement: {
            ...(service.constraints.length ? { constraints: service.constraints } : {}),
            ...(service.preferences.length ? { preferences: service.preferences.map((spread) => ({ spread })) } : {}),
            ...(service.max_replicas !== null ? { max_replicas_per_node: service.max_replicas } : {}),
          },
        }
      : {}),
    ...(service.restart_policy
      ? {
          restart_policy: {
            condition: service.restart_policy.condition,
            ...(service.restart_policy.delay ? { delay: service.restart_policy.delay } : {}),
            ...(service.restart_policy.max_attempts !== null ? { max_attempts: service.restart_policy.max_attempts } : {}),
            ...(service.restart_policy.window ? { window: service.restart_policy.window } : {}),
          },
        }
      : {}),
  };
  const health = service.healthcheck;
  return {
    image: service.image,
    ...(service.command.length ? { entrypoint: service.command } : {}),
    ...(service.args.length ? { command: service.args } : {}),
    // Names only: a value is the service's to keep (it may be a credential), and Compose reads an unset one from the shell.
    ...(service.env_names.length ? { environment: [...service.env_names].sort() } : {}),
    ...(service.ports.length
      ? {
          ports: service.ports.map((p) => ({
            target: p.target,
            ...(p.published !== null ? { published: p.published } : {}),
            protocol: p.protocol,
            mode: p.mode,
          })),
        }
      : {}),
    ...(service.networks.length ? { networks: service.networks.map((id) => networks.get(id) ?? id) } : {}),
    ...(service.mounts.length
      ? { volumes: service.mounts.map((m) => ({ type: m.type, ...(m.source ? { source: m.source } : {}), target: m.target, read_only: m.read_only })) }
      : {}),
    ...(service.secrets.length ? { secrets: service.secrets.map((s) => ({ source: s.name, target: s.target })) } : {}),
    ...(service.configs.length ? { configs: service.configs.map((c) => ({ source: c.name, target: c.target })) } : {}),
    ...(health?.test.length
      ? {
          healthcheck: {
            test: health.test,
            ...(health.interval ? { interval: health.interval } : {}),
            ...(health.timeout ? { timeout: health.timeout } : {}),
            ...(health.start_period ? { start_period: health.start_period } : {}),
            ...(health.retries !== null ? { retries: health.retries } : {}),
          },
        }
      : {}),
    ...(service.log_driver ? { logging: { driver: service.log_driver.name } } : {}),
    deploy,
  };
}

/** The name a service has in a Compose file: without its stack's prefix. */
const composeName = (service: ServiceRecord) =>
  service.stack && service.name.startsWith(`${service.stack}_`) ? service.name.slice(service.stack.length + 1) : service.name;

/**
 * Services as a Compose file, from the index: networks, volumes, secrets and
 * configs they use are declared external (a stack's own networks too: they
 * exist already), never their payloads, and environment variables by name only.
 */
export function composeFile(services: readonly ServiceRecord[], snapshot: SwarmSnapshot): string {
  const networks = new Map(snapshot.networks.map((n) => [n.id, n.name]));
  const external = (names: Iterable<string>) => Object.fromEntries([...new Set(names)].sort().map((name) => [name, { external: true }]));
  const document: Spec = {
    services: Object.fromEntries(services.map((service) => [composeName(service), serviceSpec(service, snapshot)])),
  };
  const used = {
    networks: services.flatMap((s) => s.networks.map((id) => networks.get(id) ?? id)),
    volumes: services.flatMap((s) => s.mounts.filter((m) => m.type === 'volume' && m.source).map((m) => m.source)),
    secrets: services.flatMap((s) => s.secrets.map((r) => r.name)),
    configs: services.flatMap((s) => s.configs.map((r) => r.name)),
  };
  for (const [key, names] of Object.entries(used)) if (names.length) document[key] = external(names);
  return stringify(document);
}
