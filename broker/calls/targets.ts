import type { Action } from '../../shared/catalog/action.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { closestNames } from '../../shared/format/closest-names.ts';
import type { Host } from '../agents/agent-registry.ts';
import type { Identity } from '../auth/identities.ts';
import { parseSelector } from './selector.ts';

interface TargetArguments {
  host?: string;
  server?: string;
  hosts?: string[];
  selector?: string;
}

export interface ResolvedTargets {
  hosts: Host[];
  /** Called with `host`: the answer is that host's node, not an envelope. */
  single: boolean;
  /** A call for every host: the hosts left out because the action's collector is absent there (nothing to collect). */
  absent?: { collector: string; hosts: string[] }[];
}

function unknownHost(names: string[], visible: Host[]): FleetError {
  const known = visible.map((h) => h.name);
  const suggestions = [...new Set(names.flatMap((name) => closestNames(name, known)))];
  const quoted = names.map((n) => `"${n}"`).join(', ');
  return new FleetError('not_found', `no agent is called ${quoted}`, {
    hint: suggestions.length ? `Closest agents: ${suggestions.join(', ')}. list_agents lists every agent.` : 'list_agents lists every agent and its labels.',
    details: { closest: suggestions },
  });
}

/** Whether a host runs (or, offline, last reported running) the collector an action needs. */
function hostHasCollector(host: Host, action: Action): boolean {
  if (action.collector === null || action.collector === 'agent') return true;
  return host.hello?.collectors.some((c) => c.name === action.collector) ?? false;
}

/** Whether the collector an action needs is absent on a host: nothing to collect there (no engine, not in a swarm, not configured). */
function collectorAbsent(host: Host, action: Action): boolean {
  return host.hello?.collectors.some((c) => c.name === action.collector && !c.available && c.absent === true) ?? false;
}

/**
 * Turns host / hosts / selector into agents, among those the identity may see
 * (others are treated as if they did not exist). Without any, a read runs on
 * every agent that has the action's collector; anything else must name its targets.
 */
export function resolveTargets(
  all: readonly Host[],
  identity: Identity,
  action: Action,
  args: TargetArguments,
  /** Whether selectors of changes match agent-declared labels, and whether the caller may call set_agent_labels (so a hint can offer it). */
  options: { mutationsMatchAgentLabels?: boolean; maySetLabels?: boolean } = {},
): ResolvedTargets {
  const reaches = (host: Host) => identity.grants.reachesHost(host.name);
  // Most calls name one host: its grant is checked alone, not every host's (10,000 of them at a time showed in profiles).
  let seen: Host[] | undefined;
  const visibleHosts = () => {
    seen ??= all.filter(reaches);
    return seen;
  };
  if (args.host !== undefined && args.server !== undefined && args.host !== args.server) {
    throw new FleetError('invalid_argument', 'host and server name different agents; server is only an alias of host', { hint: 'Pass one of them.' });
  }
  const host = args.host ?? args.server;
  const given = [host !== undefined, args.hosts !== undefined, args.selector !== undefined].filter(Boolean).length;
  if (given > 1) {
    throw new FleetError('invalid_argument', 'give only one of host, hosts and selector', {
      hint: 'Use hosts for a list, selector for labels, host for one agent.',
    });
  }
  const find = (name: string) => {
    const lower = name.toLowerCase();
    return all.find((h) => (h.id === name || (h.name.length === name.length && h.name.toLowerCase() === lower)) && reaches(h));
  };
  if (host !== undefined) {
    const found = find(host);
    if (!found) throw unknownHost([host], visibleHosts());
    return { hosts: [found], single: true };
  }
  if (args.hosts !== undefined) {
    const missing = args.hosts.filter((name) => !find(name));
    if (missing.length) throw unknownHost(missing, visibleHosts());
    const hosts = [...new Set(args.hosts.map((name) => find(name) as Host))];
    return { hosts, single: false };
  }
  if (args.selector !== undefined) {
    const matches = parseSelector(args.selector);
    // A label an agent gives itself must not make it the target of a change meant for others (docs/claims.md).
    const labelsOf = (h: Host) => (action.risk === 'read' || options.mutationsMatchAgentLabels ? h.labels : h.operatorLabels);
    const visible = visibleHosts();
    const hosts = visible.filter((h) => matches(labelsOf(h)));
    if (hosts.length === 0) {
      const labels = [...new Set(visible.flatMap((h) => Object.entries(labelsOf(h)).map(([k, v]) => `${k}=${v}`)))].sort().slice(0, 20);
      throw new FleetError('not_found', `no agent matches the selector "${args.selector}"`, {
        hint: labels.length
          ? `Labels in the fleet: ${labels.join(', ')}.`
          : action.risk === 'read'
            ? `No agent has labels yet: an agent takes them when it starts, with --labels role=web (fleetmesh agent, or fleetmesh up for its local agent)${options.maySetLabels ? ', and set_agent_labels changes them' : ''}.`
            : 'Selectors of changes match only labels the operator gave (fleetmesh token create --labels); name the hosts instead.',
      });
    }
    return { hosts, single: false };
  }
  if (action.risk !== 'read') {
    throw new FleetError('invalid_argument', `${action.tool} changes things, so it needs explicit targets: host, hosts or selector`, {
      hint: 'Name the agents it should act on; list_agents lists them.',
    });
  }
  // Hosts where the collector is absent have nothing to answer: they are named once, apart, not counted as failures.
  const serving = visibleHosts().filter((h) => hostHasCollector(h, action));
  const absent = serving.filter((h) => collectorAbsent(h, action)).map((h) => h.name);
  return {
    hosts: serving.filter((h) => !collectorAbsent(h, action)),
    single: false,
    ...(absent.length && action.collector ? { absent: [{ collector: action.collector, hosts: absent }] } : {}),
  };
}
