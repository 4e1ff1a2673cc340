import { create } from '@bufbuild/protobuf';
import { ReconnectSchema } from '../../shared/gen/fleetmesh/v1/mesh_pb.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';

/** A broker holding more than this share over the cluster's average moves some agents away. */
const OVER_AVERAGE = 1.25;
/** Fewer surplus agents than this are left where they are: moving them costs more than it evens out. */
const MIN_SURPLUS = 2;
/** Beats to wait after moving agents, for them to land and their new brokers to say so. */
const SETTLE_BEATS = 3;
/** How far apart agents asked to move dial their new brokers, each (so they do not arrive at once). */
const MOVE_SPACING_MS = 5;

/**
 * Evens out the agents over the brokers of a cluster, once a beat: a broker
 * holding clearly more than the average (a broker joined, or took over a dead
 * one's agents) asks some of its idle agents to reconnect to the brokers
 * holding the fewest, with the Reconnect message a draining broker sends.
 * The addresses it names are the ones those brokers announced from their own
 * configuration (`--advertise-names` and the port they listen on); nothing an
 * agent said ever chooses where agents go.
 */
export class Rebalancer {
  private quietBeats = SETTLE_BEATS;

  constructor(
    private readonly registry: Pick<AgentRegistry, 'list' | 'localSessions'>,
    private readonly log: Logger,
  ) {}

  /**
   * @param alive every broker alive now, this one included
   * @param addresses where agents reach the other brokers that said so: only those take agents
   * @param selfId this broker's id
   */
  beat(alive: readonly string[], addresses: ReadonlyMap<string, string>, selfId: string): void {
    if (this.quietBeats > 0) {
      this.quietBeats -= 1;
      return;
    }
    if (alive.length < 2 || addresses.size === 0) return;
    const held = new Map<string, number>(alive.map((broker) => [broker, 0]));
    for (const host of this.registry.list()) {
      const broker = host.session === undefined ? undefined : (host.session.heldBy ?? selfId);
      if (broker !== undefined && held.has(broker)) held.set(broker, (held.get(broker) ?? 0) + 1);
    }
    const own = held.get(selfId) ?? 0;
    const total = [...held.values()].reduce((sum, count) => sum + count, 0);
    const fair = Math.ceil(total / held.size);
    const surplus = own - fair;
    if (surplus < MIN_SURPLUS || own <= (total / held.size) * OVER_AVERAGE) return;
    const spreadMs = Math.max(1000, surplus * MOVE_SPACING_MS);
    const idle = this.registry.localSessions().filter((session) => session.inFlight === 0);
    const moves: string[] = [];
    for (const session of idle.slice(0, surplus)) {
      const [target] = [...held].filter(([broker]) => broker !== selfId && addresses.has(broker)).sort((x, y) => x[1] - y[1])[0] ?? [];
      const address = target && addresses.get(target);
      // Only to a broker holding fewer than the fair share: the others are no better a place.
      if (!target || !address || (held.get(target) ?? 0) >= fair) break;
      held.set(target, (held.get(target) ?? 0) + 1);
      session.send({
        case: 'reconnect',
        value: create(ReconnectSchema, {
          delayMs: Math.floor(Math.random() * spreadMs),
          address,
          reason: `the cluster is evening out its agents: broker ${selfId} holds ${own}, the average is ${fair}`,
        }),
      });
      session.close();
      moves.push(target);
    }
    if (moves.length === 0) return;
    this.quietBeats = SETTLE_BEATS;
    this.log.info('asked agents to move to less loaded brokers', { moved: moves.length, held: own, average: fair, to: [...new Set(moves)].join(',') });
  }
}
