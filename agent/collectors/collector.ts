import type { ContainerFigures } from '../../shared/wire/sample-codec.ts';
import type { Dispatcher } from '../dispatcher/dispatcher.ts';

/** Sends one report to the broker, of a kind its collector's domain declares (in shared/domains); dropped while disconnected. */
export type Report = (kind: string, payload: unknown) => void;

export interface CollectorStatus {
  available: boolean;
  /** Why not, in words an operator can act on; empty when available. */
  reason: string;
  /**
   * Unavailable because there is nothing to collect on this host (no engine
   * socket, an engine in no swarm, an API not configured), as opposed to
   * something that should answer and did not. An absent collector is not a
   * failure: the broker lists it apart and never calls an answer partial for it.
   */
  absent?: boolean;
}

/**
 * One source of facts and actions on a host, one per domain (its folder of
 * agent/collectors/). A collector that is unavailable still registers its actions: they
 * answer `collector_unavailable` with the reason, so the broker can say which
 * host lacks what.
 */
export interface Collector {
  readonly name: string;
  /** Checks whether the collector can work now, and why not. */
  probe(): Promise<CollectorStatus>;
  /** Registers the collector's action handlers. */
  register(dispatcher: Dispatcher): void;
  /** Host facts this collector knows (the engine's version, the node it manages, …). */
  facts?(): Record<string, string | number | boolean>;
  /** Per-container figures for the next heartbeat (the docker collector's metrics samples). */
  takeContainerSamples?(): ContainerFigures[];
  start?(): Promise<void>;
  /** The stream to the broker is (again) up: send what the broker should know afresh (inventories, snapshots). */
  onConnected?(): void;
  stop?(): Promise<void>;
}
