import type { ContainerCreateOptions, ContainerInspectInfo, EndpointSettings } from 'dockerode';
import { containerName } from './container-name.ts';

/** Engine objects are read field by field, defensively: only what is read below is relied on. */
type Loose = Record<string, unknown>;

/** How to make a container again on another image: what to create, and the networks to join before it starts. */
export interface RecreatePlan {
  readonly create: ContainerCreateOptions;
  /** Networks besides the one it is created on (an engine older than API 1.44 takes one at creation). */
  readonly connect: readonly { network: string; endpoint: EndpointSettings }[];
}

/** Config fields an image sets by itself: a container holding the old image's value keeps none of its own. */
const IMAGE_FIELDS = ['Cmd', 'Entrypoint', 'WorkingDir', 'User', 'StopSignal', 'Healthcheck', 'Shell', 'OnBuild'] as const;

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

function without(list: unknown, inherited: unknown): string[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const known = new Set(Array.isArray(inherited) ? (inherited as string[]) : []);
  return (list as string[]).filter((item) => !known.has(item));
}

function withoutEntries(record: unknown, inherited: unknown): Record<string, unknown> | undefined {
  if (!record || typeof record !== 'object') return undefined;
  const base = (inherited && typeof inherited === 'object' ? inherited : {}) as Loose;
  return Object.fromEntries(Object.entries(record as Loose).filter(([key, value]) => !(key in base && same(base[key], value))));
}

/** An endpoint as the engine takes it back: the settings a person gave (aliases, fixed addresses, links), not what the engine assigned. */
function endpointOf(settings: Loose, containerId: string): EndpointSettings {
  // Older engines list the container's short id among its aliases; the new container gets its own.
  const aliases = ((settings.Aliases as string[] | null) ?? []).filter((alias) => alias !== containerId.slice(0, 12));
  return {
    ...(settings.IPAMConfig ? { IPAMConfig: settings.IPAMConfig } : {}),
    ...(Array.isArray(settings.Links) && settings.Links.length ? { Links: settings.Links } : {}),
    ...(aliases.length ? { Aliases: aliases } : {}),
    ...(settings.DriverOpts ? { DriverOpts: settings.DriverOpts } : {}),
  } as EndpointSettings;
}

/** Where a bind or mount puts something in the container. */
function destinations(host: Loose): Set<string> {
  const binds = ((host.Binds as string[] | null) ?? []).map((bind) => bind.split(':')[1] ?? '');
  const mounts = ((host.Mounts as { Target?: string }[] | null) ?? []).map((mount) => mount.Target ?? '');
  return new Set([...binds, ...mounts]);
}

/**
 * The container again, from its own inspected configuration, on `image`: its
 * name, environment, labels, command, ports, mounts, restart policy, resources
 * and networks with their aliases stay. What its old image gave it (that
 * image's environment, command, labels, health check…) is left out, so the
 * new image's own apply, as a compose recreate would. Anonymous volumes are
 * mounted again by name, so their data stays with the container.
 */
export function recreatePlan(info: ContainerInspectInfo, oldImageConfig: Loose | undefined, image: string): RecreatePlan {
  const inherited = oldImageConfig ?? {};
  const config: Loose = { ...(info.Config as unknown as Loose) };
  for (const field of IMAGE_FIELDS) if (field in config && same(config[field], inherited[field])) delete config[field];
  config.Env = without(config.Env, inherited.Env);
  config.Labels = withoutEntries(config.Labels, inherited.Labels);
  config.ExposedPorts = withoutEntries(config.ExposedPorts, inherited.ExposedPorts);
  config.Volumes = withoutEntries(config.Volumes, inherited.Volumes);
  // The engine names a container's host after its id when nobody named it.
  if (config.Hostname === info.Id.slice(0, 12)) delete config.Hostname;
  config.Image = image;

  const host: Loose = { ...(info.HostConfig as unknown as Loose) };
  // Inspect writes a link as /other:/this/alias; a create takes other:alias.
  if (Array.isArray(host.Links)) {
    host.Links = (host.Links as string[]).map((link) => {
      const [target = '', alias = ''] = link.split(':');
      return `${target.replace(/^\//, '')}:${alias.slice(alias.lastIndexOf('/') + 1)}`;
    });
  }
  const placed = destinations(host);
  const anonymous = (info.Mounts ?? []).filter((mount) => mount.Type === 'volume' && mount.Name && !placed.has(mount.Destination));
  if (anonymous.length) {
    host.Mounts = [
      ...((host.Mounts as unknown[] | null) ?? []),
      ...anonymous.map((mount) => ({ Type: 'volume', Source: mount.Name, Target: mount.Destination, ReadOnly: !mount.RW })),
    ];
  }

  const mode = String(host.NetworkMode ?? 'default');
  const networks = Object.entries((info.NetworkSettings?.Networks ?? {}) as Record<string, Loose>).map(([network, settings]) => ({
    network,
    endpoint: endpointOf(settings, info.Id),
  }));
  // Host, none and another container's networking have no endpoints of their own to make.
  const own = !['host', 'none'].includes(mode) && !mode.startsWith('container:');
  const primaryName = mode === 'default' ? 'bridge' : mode;
  const primary = own ? (networks.find((entry) => entry.network === primaryName) ?? networks[0]) : undefined;
  return {
    create: {
      ...(config as ContainerCreateOptions),
      name: containerName(info),
      HostConfig: host as ContainerCreateOptions['HostConfig'],
      ...(primary ? { NetworkingConfig: { EndpointsConfig: { [primary.network]: primary.endpoint } } } : {}),
    },
    connect: own ? networks.filter((entry) => entry !== primary) : [],
  };
}
