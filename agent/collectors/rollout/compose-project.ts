import type { ContainerInspectInfo } from 'dockerode';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { NUMBER_LABEL, ONEOFF_LABEL, PROJECT_LABEL, SERVICE_LABEL } from './compose-labels.ts';
import type { RolloutApi } from './rollout-engine.ts';

/**
 * The service containers of a compose project running on this host, found by
 * their labels (no compose file is read), inspected, in service and number
 * order; `services` narrows them. A project or service the host does not run
 * is not_found, naming the ones it does.
 */
export async function projectContainers(docker: RolloutApi, project: string, services?: readonly string[]): Promise<ContainerInspectInfo[]> {
  const rows = (await docker.listContainers({ all: true, filters: { label: [`${PROJECT_LABEL}=${project}`] } })).filter(
    (row) => row.Labels[ONEOFF_LABEL]?.toLowerCase() !== 'true',
  );
  if (rows.length === 0) {
    const running = await docker.listContainers({ all: true, filters: { label: [PROJECT_LABEL] } });
    const projects = [...new Set(running.map((row) => row.Labels[PROJECT_LABEL] ?? ''))].filter(Boolean).sort();
    throw new FleetError('not_found', `no compose project "${project}" on this host`, {
      hint: projects.length ? `Its projects: ${projects.join(', ')}.` : 'This host runs no compose project; docker_list shows its containers.',
    });
  }
  const known = [...new Set(rows.map((row) => row.Labels[SERVICE_LABEL] ?? ''))].sort();
  const unknown = (services ?? []).filter((service) => !known.includes(service));
  if (unknown.length) {
    throw new FleetError('not_found', `compose project "${project}" has no service ${unknown.join(', ')} on this host`, {
      hint: `Its services: ${known.join(', ')}.`,
    });
  }
  const chosen = services ? rows.filter((row) => services.includes(row.Labels[SERVICE_LABEL] ?? '')) : rows;
  const infos = await Promise.all(chosen.map((row) => docker.getContainer(row.Id).inspect()));
  const order = (info: ContainerInspectInfo) => [info.Config.Labels?.[SERVICE_LABEL] ?? '', Number(info.Config.Labels?.[NUMBER_LABEL] ?? 0)] as const;
  return infos.sort((a, b) => {
    const [serviceA, numberA] = order(a);
    const [serviceB, numberB] = order(b);
    return serviceA.localeCompare(serviceB) || numberA - numberB;
  });
}

/** The containers of these names as they are now (a change that held them may have replaced them). */
export function inspectEach(docker: RolloutApi, names: readonly string[]): Promise<ContainerInspectInfo[]> {
  return Promise.all(names.map((name) => docker.getContainer(name).inspect()));
}
