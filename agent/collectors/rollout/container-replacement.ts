import type { Container, ContainerInspectInfo } from 'dockerode';
import type { Replacement } from '../../../shared/domains/rollout/rollout-shapes.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import { dockerMessage, dockerStatus, engineHas } from '../../engine/engine-errors.ts';
import { SERVICE_LABEL } from './compose-labels.ts';
import { containerName } from './container-name.ts';
import { waitUntilUp } from './container-verdict.ts';
import { recreatePlan } from './recreate-plan.ts';
import type { RolloutApi } from './rollout-engine.ts';

export interface ReplaceOptions {
  /** How long the new container (and, after a failure, the previous one) may take to be up, in seconds. */
  waitS: number;
  /** Start the new container even when the previous one was stopped (compose_up brings a project up). */
  start: boolean;
  /** The call's cancellation: it ends the wait for the new container, which then counts as failed. */
  signal: AbortSignal;
  emit(payload: unknown): void;
}

/** The engine's default grace before it kills a stopping container. */
const STOP_GRACE_S = 10;

/** Where the previous container waits, under another name, until the new one is up. */
export function keptName(name: string): string {
  return `${name}-fleetmesh-previous`;
}

const exists = (docker: RolloutApi, name: string): Promise<boolean> => engineHas(() => docker.getContainer(name).inspect());

async function stop(container: Container, graceS: number): Promise<void> {
  try {
    await container.stop({ t: graceS });
  } catch (error) {
    // 304: it had stopped already.
    if (dockerStatus(error) !== 304) throw error;
  }
}

/**
 * Replaces a container with one made from its own configuration on `image`
 * (which the host has): the previous one is stopped and kept under another
 * name, the new one takes its name and networks and is started and waited
 * for. When it does not come up, it is removed and the previous container
 * takes its name back and runs again, so a failed roll-forward ends where it
 * began; only once the new one is up is the previous one removed.
 */
export async function replaceContainer(docker: RolloutApi, info: ContainerInspectInfo, image: string, options: ReplaceOptions): Promise<Replacement> {
  const name = containerName(info);
  const row = { container: name, service: info.Config.Labels?.[SERVICE_LABEL] ?? null, from_image: info.Config.Image, to_image: image };
  const target = await docker.getImage(image).inspect();
  if (target.Id === info.Image) {
    return { ...row, status: 'unchanged', health: info.State.Health?.Status ?? null, reason: null };
  }
  const previous = keptName(name);
  if (await exists(docker, previous)) {
    throw new FleetError('conflict', `a container named ${previous} is left from a roll-forward of ${name} that did not finish`, {
      hint: `It is the container ${name} ran before: compare it with docker_inspect name=${previous}, remove the one not wanted on that host, then call again.`,
    });
  }
  const oldImage = await docker
    .getImage(info.Image)
    .inspect()
    .catch(() => undefined);
  const plan = recreatePlan(info, oldImage?.Config as Record<string, unknown> | undefined, image);
  const wasRunning = info.State.Running;
  const old = docker.getContainer(info.Id);

  options.emit({ container: name, phase: 'stopping' });
  if (wasRunning) await stop(old, (info.Config as { StopTimeout?: number }).StopTimeout ?? STOP_GRACE_S);
  try {
    await old.rename({ name: previous });
  } catch (error) {
    if (wasRunning) await old.start().catch(() => undefined);
    throw error;
  }

  let fresh: Container | undefined;
  let failure: string;
  try {
    options.emit({ container: name, phase: 'creating', image });
    fresh = await docker.createContainer(plan.create);
    for (const { network, endpoint } of plan.connect) await docker.getNetwork(network).connect({ Container: fresh.id, EndpointConfig: endpoint });
    if (!wasRunning && !options.start) {
      await removeQuietly(old);
      return { ...row, status: 'updated', health: null, reason: 'not started: it was stopped before' };
    }
    await fresh.start();
    options.emit({ container: name, phase: 'waiting' });
    const wait = AbortSignal.any([options.signal, AbortSignal.timeout(options.waitS * 1000)]);
    const verdict = await waitUntilUp(fresh, wait, options.waitS);
    if (verdict.up) {
      const removed = await removeQuietly(old);
      return {
        ...row,
        status: 'updated',
        health: verdict.health,
        reason: removed ? null : `its previous container is kept as ${previous}: it could not be removed`,
      };
    }
    failure = `the new container failed: ${verdict.reason}`;
  } catch (error) {
    failure = `the engine refused the new container: ${dockerMessage(error)}`;
  }

  options.emit({ container: name, phase: 'restoring' });
  try {
    if (fresh) await fresh.remove({ force: true });
    await old.rename({ name });
    if (!wasRunning) return { ...row, status: 'rolled_back', health: null, reason: `${failure}; the previous container is back, stopped as it was` };
    await old.start();
    // The previous container's own wait: the call's cancellation must not cut a restore short.
    const back = await waitUntilUp(old, AbortSignal.timeout(options.waitS * 1000), options.waitS);
    const state = back.up ? 'runs again' : `was started again but is not up (${back.reason})`;
    return { ...row, status: 'rolled_back', health: back.health, reason: `${failure}; the previous container ${state} on ${row.from_image}` };
  } catch (error) {
    return {
      ...row,
      status: 'failed',
      health: null,
      reason: `${failure}; restoring the previous container failed too (${dockerMessage(error)}): it is ${previous} on that host, docker_start name=${previous} starts it`,
    };
  }
}

/** Removes the previous container once it is not needed; whether it went. */
async function removeQuietly(container: Container): Promise<boolean> {
  try {
    // Its anonymous volumes stay: the new container mounts them.
    await container.remove({ v: false });
    return true;
  } catch {
    return false;
  }
}
