import type { ContainerInfo, ContainerInspectInfo } from 'dockerode';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { closestNames } from '../../shared/format/closest-names.ts';
import type { EngineClient } from './engine-client.ts';
import { dockerMessage, dockerStatus } from './engine-errors.ts';

/** What we keep of each container's inspect: the facts the list endpoint does not give. */
interface Details {
  startedAt: string;
  restartCount: number;
  health: string | null;
  tty: boolean;
}

/** Inspects in flight at once when many containers are not cached yet (an agent's first list on a busy engine). */
const INSPECTS_AT_ONCE = 8;

const NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;

export function containerName(info: Pick<ContainerInfo, 'Names' | 'Id'>): string {
  return (info.Names[0] ?? info.Id.slice(0, 12)).replace(/^\//, '');
}

/**
 * The containers of this engine: listed fresh on each call, with the inspect
 * facts the list lacks (start time, restart count, health) cached and refreshed
 * by engine events, so a list never inspects every container one by one.
 */
export class ContainerDirectory {
  private readonly details = new Map<string, Details>();

  constructor(private readonly docker: Pick<EngineClient, 'listContainers' | 'getContainer'>) {}

  async list(all = true): Promise<ContainerInfo[]> {
    return this.docker.listContainers({ all });
  }

  /** Inspect facts for these containers, fetching (a few at a time) only the ones not cached. */
  async detailsOf(ids: string[]): Promise<Map<string, Details>> {
    const missing = ids.filter((id) => !this.details.has(id));
    let next = 0;
    const worker = async () => {
      while (next < missing.length) await this.refresh(missing[next++] as string).catch(() => undefined);
    };
    await Promise.all(Array.from({ length: Math.min(INSPECTS_AT_ONCE, missing.length) }, worker));
    return this.cached(ids);
  }

  /** The inspect facts already cached for these containers, without asking the engine. */
  cached(ids: string[]): Map<string, Details> {
    return new Map(ids.flatMap((id) => (this.details.has(id) ? [[id, this.details.get(id) as Details]] : [])));
  }

  /** Re-reads one container (an event said it changed); forgets it when it is gone. */
  async refresh(id: string): Promise<ContainerInspectInfo | undefined> {
    try {
      const info = await this.docker.getContainer(id).inspect();
      this.details.set(info.Id, {
        startedAt: info.State.StartedAt,
        restartCount: info.RestartCount,
        health: info.State.Health?.Status ?? null,
        tty: info.Config.Tty,
      });
      return info;
    } catch (error) {
      if (dockerStatus(error) === 404) this.details.delete(id);
      throw error;
    }
  }

  forget(id: string): void {
    this.details.delete(id);
  }

  /**
   * A container by name, id or unique id prefix. A name shaped like a flag is
   * refused; an unknown one names the closest containers.
   */
  async resolve(wanted: string): Promise<ContainerInfo> {
    if (wanted.startsWith('-') || !NAME.test(wanted)) {
      throw new FleetError('invalid_argument', `"${wanted}" is not a container name or id`, {
        hint: 'Container names are letters, digits, "_", "." and "-", starting with a letter or digit; docker_list lists them.',
      });
    }
    const containers = await this.list(true);
    const exact = containers.find((c) => containerName(c) === wanted || c.Id === wanted);
    if (exact) return exact;
    if (/^[0-9a-f]{4,64}$/.test(wanted)) {
      const byPrefix = containers.filter((c) => c.Id.startsWith(wanted));
      if (byPrefix.length === 1) return byPrefix[0] as ContainerInfo;
      if (byPrefix.length > 1) {
        throw new FleetError('ambiguous', `the id prefix "${wanted}" matches ${byPrefix.length} containers`, {
          hint: `Give more of the id, or a name: ${byPrefix.map(containerName).join(', ')}.`,
        });
      }
    }
    const closest = closestNames(wanted, containers.map(containerName));
    throw new FleetError('not_found', `no container "${wanted}" on this host`, {
      hint: closest.length ? `Closest containers: ${closest.join(', ')}. docker_list lists them all.` : 'docker_list lists the containers of this host.',
    });
  }

  /** Inspects a resolved container, turning engine failures into our vocabulary. */
  async inspect(wanted: string): Promise<ContainerInspectInfo> {
    const container = await this.resolve(wanted);
    try {
      const info = await this.refresh(container.Id);
      if (!info) throw new Error('no answer');
      return info;
    } catch (error) {
      if (dockerStatus(error) === 404)
        throw new FleetError('not_found', `container "${wanted}" is gone`, { hint: 'docker_list lists the containers of this host.' });
      throw new FleetError('collector_failed', `the engine could not inspect "${wanted}": ${dockerMessage(error)}`, { collector: 'docker' });
    }
  }

  isTty(id: string): boolean | undefined {
    return this.details.get(id)?.tty;
  }
}
