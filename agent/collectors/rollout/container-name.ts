import type { ContainerInspectInfo } from 'dockerode';

/** A container's name, as its inspect gives it (without the engine's leading slash). */
export function containerName(info: Pick<ContainerInspectInfo, 'Name'>): string {
  return info.Name.replace(/^\//, '');
}
