import { type Action, domainOf } from '../../shared/catalog/action.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Host } from '../agents/agent-registry.ts';

type HelloOf = Pick<Host, 'name' | 'hello'>;

/**
 * What the fleet an identity sees can serve: an action the broker answers
 * always; one of the agent's built-ins once any agent is there; any other once
 * some agent has its collector and something for it to collect (available, or
 * failed: a failure is news, while an absent collector has nothing to say).
 * Offline agents count by what they last reported, so a host that restarts
 * does not make tools come and go.
 */
export class FleetServed {
  private readonly collectors: ReadonlySet<string>;
  private readonly absent = new Map<string, { host: string; reason: string }>();
  private readonly anyHost: boolean;

  constructor(hosts: readonly HelloOf[]) {
    const served = new Set<string>();
    for (const host of hosts) {
      for (const collector of host.hello?.collectors ?? []) {
        if (collector.available || !collector.absent) served.add(collector.name);
        else if (!this.absent.has(collector.name)) this.absent.set(collector.name, { host: host.name, reason: collector.reason });
      }
    }
    this.collectors = served;
    this.anyHost = hosts.length > 0;
  }

  serves(action: Action): boolean {
    if (action.collector === null) return true;
    if (action.collector === 'agent') return this.anyHost;
    return this.collectors.has(action.collector);
  }

  /** The domains with an action this fleet serves (a resource template or prompt of any other is left out). */
  domains(actions: readonly Action[]): Set<string> {
    return new Set(actions.filter((action) => this.serves(action)).map((action) => domainOf(action)));
  }

  /** A key that changes exactly when what is served changes, for telling sessions their lists changed. */
  key(actions: readonly Action[]): string {
    return actions
      .filter((action) => this.serves(action))
      .map((action) => action.id)
      .join(',');
  }

  /** Why a tool of an action this fleet does not serve is left out of tools/list, and what would bring it back. */
  hidden(tool: string, action: Action): FleetError {
    const collector = action.collector ?? '';
    if (!this.anyHost) {
      return new FleetError('collector_unavailable', `${tool} is not offered: no agent is enrolled that this identity can see`, {
        collector,
        hint: 'It appears in tools/list once an agent joins (fleetmesh token create prints the command that enrolls one).',
      });
    }
    const absent = this.absent.get(collector);
    return new FleetError(
      'collector_unavailable',
      `${tool} is not offered: no agent this identity can see has anything for its ${collector} collector to collect${absent ? ` (on ${absent.host}: ${absent.reason})` : ''}`,
      {
        collector,
        hint: `It appears in tools/list (and clients are told the list changed) once an agent with the ${collector} collector serving connects; get_fleet_status lists absent collectors and why.`,
      },
    );
  }
}
