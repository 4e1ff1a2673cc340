import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { CollectorStatus } from '../collectors/collector.ts';
import type { EngineClient } from './engine-client.ts';
import { dockerMessage, dockerStatus, engineAbsent } from './engine-errors.ts';

/**
 * What a collector that reads the engine is when the engine does not answer:
 * absent when the host has no engine (its socket was never there), failed
 * otherwise (refused, unreachable, or a socket that went away).
 */
export function unreachableEngine(error: unknown, address: string): CollectorStatus {
  if (engineAbsent(error)) return { available: false, absent: true, reason: `no Docker engine on this host (no socket at ${address})` };
  return { available: false, reason: `the Docker engine at ${address} cannot be reached: ${dockerMessage(error)}` };
}

/** The error a call of an engine collector's action answers while the engine is unavailable; it says when the engine is absent. */
export function engineUnavailable(status: CollectorStatus, collector: string): FleetError {
  return new FleetError('collector_unavailable', status.reason || 'the Docker engine cannot be reached', {
    collector,
    hint: status.absent
      ? 'This host has no Docker engine: its Docker tools answer nothing here (start Docker, or point --docker-socket at one).'
      : 'Check that Docker runs on that host and that the agent can use its socket (--docker-socket, DOCKER_HOST, or the docker group).',
    ...(status.absent ? { details: { absent: true } } : {}),
  });
}

/**
 * A collector's way to the Docker engine: whether it answers, and a call
 * wrapper that turns an unreachable engine into collector_unavailable and the
 * engine's refusals into collector_failed with its words.
 */
export class EngineAccess<Api extends Pick<EngineClient, 'version'>> {
  private status: CollectorStatus = { available: false, reason: 'not probed yet' };

  constructor(
    /** The slice of the engine client the collector's handlers call. */
    readonly docker: Api,
    private readonly address: string,
    private readonly collector: string,
  ) {}

  async probe(): Promise<CollectorStatus> {
    try {
      await this.docker.version();
      this.status = { available: true, reason: '' };
    } catch (error) {
      this.status = unreachableEngine(error, this.address);
    }
    return this.status;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (!this.status.available && !(await this.probe()).available) throw engineUnavailable(this.status, this.collector);
    try {
      return await work();
    } catch (error) {
      if (error instanceof FleetError) throw error;
      // A stream stopped by the work's timeout_s (or the call's cancellation).
      if ((error as Error).name === 'AbortError' || (error as Error).name === 'TimeoutError') {
        throw new FleetError('deadline_exceeded', `the ${this.collector} work did not finish in time`, {
          collector: this.collector,
          hint: 'Call again with a larger timeout_s.',
        });
      }
      if (dockerStatus(error) === undefined && !(await this.probe()).available) throw engineUnavailable(this.status, this.collector);
      throw new FleetError('collector_failed', `the Docker engine refused: ${dockerMessage(error)}`, {
        collector: this.collector,
        hint: "The engine's words are in the message.",
      });
    }
  }
}
