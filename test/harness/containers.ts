import Docker from 'dockerode';
import { inject } from 'vitest';

/** The test engine, as the tests use it directly to arrange containers. */
export function testDocker(): Docker {
  return new Docker({ socketPath: inject('dockerHost').replace(/^unix:\/\//, '') });
}

export interface ContainerSpec {
  name: string;
  command: string[];
  labels?: Record<string, string>;
  env?: string[];
  publish?: number[];
  restart?: { Name: string; MaximumRetryCount?: number };
  tty?: boolean;
  start?: boolean;
}

/** Creates (and by default starts) a busybox container; returns its id. */
export async function runContainer(docker: Docker, spec: ContainerSpec): Promise<string> {
  const exposed = Object.fromEntries((spec.publish ?? []).map((port) => [`${port}/tcp`, {}]));
  const container = await docker.createContainer({
    name: spec.name,
    Image: inject('testImage'),
    Cmd: spec.command,
    Labels: spec.labels ?? {},
    Env: spec.env ?? [],
    Tty: spec.tty ?? false,
    ExposedPorts: exposed,
    HostConfig: {
      PortBindings: Object.fromEntries((spec.publish ?? []).map((port) => [`${port}/tcp`, [{ HostPort: '' }]])),
      ...(spec.restart ? { RestartPolicy: spec.restart } : {}),
    },
  });
  if (spec.start !== false) await container.start();
  return container.id;
}

/** Removes containers by name, whatever state they are in. */
export async function removeContainers(docker: Docker, names: string[]): Promise<void> {
  await Promise.all(
    names.map((name) =>
      docker
        .getContainer(name)
        .remove({ force: true })
        .catch(() => undefined),
    ),
  );
}
