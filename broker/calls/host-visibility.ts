import type { Action } from '../../shared/catalog/action.ts';
import { HOST_SCOPED_TYPES } from '../../shared/domains/resource-types.ts';
import { errorInfo, FleetError } from '../../shared/errors/fleet-error.ts';
import type { Host } from '../agents/agent-registry.ts';
import type { Identity } from '../auth/identities.ts';
import type { HostOutcome } from '../fanout/fan-out.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import { forbidden } from './authorization.ts';
import type { ResolvedTargets } from './targets.ts';

/** The types whose things live on one host's engine: a grant on some of them is no grant on the host. */
const HOST_SCOPED = new Set<string>(HOST_SCOPED_TYPES);

/** The targeted hosts split by the identity's grants: the ones asked, and the answers of the ones hidden. */
interface HostVisibility {
  live: Host[];
  hidden: HostOutcome[];
}

/**
 * Which targeted hosts are asked: where the named resource is hidden, a host
 * answers not_found as if it did not exist there; a change needing a write
 * grant the identity lacks is refused whole.
 */
export function partitionByGrants(identity: Identity, action: Action, hosts: readonly Host[], resourceName: string | undefined): HostVisibility {
  const scope = action.resources;
  const writes = action.risk !== 'read';
  const hidden = new Map<Host, 'partial' | 'resource'>();
  const denied: string[] = [];
  // A grant on some containers of a host is not a grant on the host: its processes, ports and stats stay hidden.
  const answersPerContainer = scope !== undefined && HOST_SCOPED.has(scope.kind) && (resourceName !== undefined || !!scope.lists?.length);
  for (const host of hosts) {
    if (!answersPerContainer && !identity.grants.host(host.name)) {
      hidden.set(host, 'partial');
    } else if (resourceName !== undefined && scope) {
      const name = `${host.name}/${resourceName}`;
      if (!identity.grants.resource(scope.kind, name)) hidden.set(host, 'resource');
      else if (writes && !identity.grants.resource(scope.kind, name, 'write')) denied.push(host.name);
    } else if (writes && !identity.grants.host(host.name, 'write')) {
      denied.push(host.name);
    }
  }
  if (denied.length) throw forbidden(action, denied);
  return {
    live: hosts.filter((host) => !hidden.has(host)),
    hidden: [...hidden].map(([host, why]) => ({
      host,
      outcome: {
        ok: false,
        error:
          why === 'partial'
            ? errorInfo(
                'not_found',
                `${action.tool} shows the whole of ${host.name}, and this identity may see only some of its containers`,
                'Ask for a host grant, or use the container tools.',
              )
            : errorInfo('not_found', `no ${scope?.kind ?? 'resource'} "${resourceName}" on ${host.name}`, 'List what exists on that host first.'),
      },
      durationMs: 0,
    })),
  };
}

/** The host the index says holds a resource (a sandbox lives on one host), answered as that host's node. */
export function locateResource(visibleHosts: readonly Host[], index: FleetIndex, kind: string, name: string): ResolvedTargets {
  const held = new Set(index.rows({ types: new Set([kind]), match: (id) => id === name }).map((resource) => resource.host));
  let holders = visibleHosts.filter((host) => held.has(host));
  // An offline host's last inventory stays in the index; prefer the hosts that can answer now.
  if (holders.length > 1 && holders.some((h) => h.session)) holders = holders.filter((h) => h.session);
  if (holders.length === 0) {
    throw new FleetError('not_found', `no ${kind} "${name}" in the fleet`, { hint: `find with type ${kind} lists them on every host.` });
  }
  if (holders.length > 1) {
    throw new FleetError('ambiguous', `${kind} "${name}" is on ${holders.length} hosts`, {
      hint: `Pass host: one of ${holders.map((h) => h.name).join(', ')}.`,
    });
  }
  return { hosts: holders, single: true };
}
