import type { AppDefinition } from './app-definition.ts';

/** A compose duration in nanoseconds, as the engine takes it. */
export function durationNs(text: string): number {
  let ns = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(ms|s|m|h)/g)) {
    ns += Number(amount) * { ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 }[unit as 'ms' | 's' | 'm' | 'h'];
  }
  return ns;
}

/** An app's ports as numbers. */
export function appPorts(app: AppDefinition): { host_port: number; container_port: number; protocol: 'tcp' | 'udp' }[] {
  return app.ports.map((port) => {
    const [pair, protocol] = port.split('/');
    const [host, container] = (pair as string).split(':');
    return { host_port: Number(host), container_port: Number(container), protocol: protocol === 'udp' ? 'udp' : 'tcp' };
  });
}

/** An app's volumes: the compose name, the engine's volume name (APP-NAME) and where it is mounted. */
export function appVolumes(app: AppDefinition): { name: string; volume: string; path: string }[] {
  return app.volumes.map((entry) => {
    const at = entry.indexOf(':');
    const name = entry.slice(0, at);
    return { name, volume: `${app.name}-${name}`, path: entry.slice(at + 1) };
  });
}
