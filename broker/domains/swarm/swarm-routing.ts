import type { SwarmSnapshot } from '../../../shared/engine/records.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Host } from '../../agents/agent-registry.ts';
import { assessClaims } from '../../agents/claims.ts';
import type { FleetIndex } from '../../index/fleet-index.ts';
import { SwarmIndexer } from './swarm-indexer.ts';

interface SwarmRoute {
  clusterId: string;
  clusterName: string;
  /** The manager agents to try, healthiest first. */
  managers: Host[];
}

interface KnownSwarm {
  id: string;
  name: string;
  managers: Host[];
  snapshot: SwarmSnapshot | undefined;
}

/** A manager agent able to serve swarm tools now. */
function serving(host: Host): boolean {
  return host.hello?.facts.swarm_role === 'manager' && (host.hello.collectors.find((c) => c.name === 'swarm')?.available ?? false);
}

/**
 * Healthiest first: online before stale, then the one with fewer calls in
 * flight, then the freshest heartbeat, then the longest-lived stream. Never by
 * name: a name is the agent's to choose, and must not buy it the secrets.
 */
function byHealth(a: Host, b: Host): number {
  const state = (h: Host) => (h.state === 'online' ? 0 : 1);
  return (
    state(a) - state(b) ||
    (a.session?.inFlight ?? 0) - (b.session?.inFlight ?? 0) ||
    (b.lastHeartbeatAt ?? 0) - (a.lastHeartbeatAt ?? 0) ||
    (a.session?.connectedAt ?? 0) - (b.session?.connectedAt ?? 0)
  );
}

/**
 * Every swarm the fleet knows, from its approved managers and from the index (a
 * swarm whose managers are all gone still shows). An agent whose manager
 * claim is still pending neither adds a swarm nor serves one.
 */
export function knownSwarms(hosts: readonly Host[], index: FleetIndex): KnownSwarm[] {
  const claims = assessClaims(hosts, index);
  const swarms = new Map<string, KnownSwarm>();
  for (const entry of index.indexer(SwarmIndexer).swarmEntries()) {
    swarms.set(entry.snapshot.cluster_id, {
      id: entry.snapshot.cluster_id,
      name: entry.snapshot.cluster_name || entry.snapshot.cluster_id,
      managers: [],
      snapshot: entry.snapshot,
    });
  }
  for (const host of hosts) {
    const id = host.hello?.facts.swarm_id;
    if (typeof id !== 'string' || !id || host.hello?.facts.swarm_role !== 'manager') continue;
    if (!claims.get(host.id)?.some((c) => c.role === 'swarm-manager' && c.object === id && c.status !== 'pending')) continue;
    const named = typeof host.hello.facts.swarm_name === 'string' ? host.hello.facts.swarm_name : '';
    const swarm = swarms.get(id) ?? { id, name: named || id, managers: [], snapshot: undefined };
    if (named) swarm.name = named;
    if (serving(host)) swarm.managers.push(host);
    swarms.set(id, swarm);
  }
  for (const swarm of swarms.values()) {
    // Offline ones never serve.
    swarm.managers = swarm.managers.filter((h) => h.session && h.state !== 'offline').sort(byHealth);
  }
  return [...swarms.values()];
}

function holds(snapshot: SwarmSnapshot | undefined, value: string): boolean {
  if (!snapshot) return false;
  const match = (id: string, name: string) => id === value || name === value || (value.length >= 6 && id.startsWith(value));
  return (
    snapshot.services.some((s) => match(s.id, s.name)) ||
    snapshot.tasks.some((t) => match(t.id, t.name)) ||
    snapshot.nodes.some((n) => match(n.id, n.hostname)) ||
    snapshot.services.some((s) => s.stack === value) ||
    snapshot.secrets.some((s) => match(s.id, s.name)) ||
    snapshot.configs.some((c) => match(c.id, c.name)) ||
    snapshot.networks.some((n) => match(n.id, n.name))
  );
}

/**
 * Which swarm a call is for, and which managers can serve it: the one named by
 * `cluster` (id, id prefix or operator's name); else the only swarm there is;
 * else the one swarm that holds the resource the call names. Anything else is
 * ambiguous, and the answer lists the swarms.
 */
export function routeSwarmCall(
  hosts: readonly Host[],
  index: FleetIndex,
  params: Record<string, unknown>,
  /** For reads: only swarms the caller sees anything of are named, listed or chosen. */
  shown: (clusterId: string) => boolean = () => true,
): SwarmRoute {
  const known = knownSwarms(hosts, index);
  const swarms = known.filter((swarm) => shown(swarm.id));
  if (known.length > 0 && swarms.length === 0) {
    throw new FleetError('not_found', 'no swarm is visible to this identity', { hint: 'find lists what you may see.' });
  }
  const listing = () => swarms.map((s) => (s.name === s.id ? s.id : `${s.name} (${s.id.slice(0, 12)})`)).join(', ');
  if (swarms.length === 0) {
    throw new FleetError('collector_unavailable', 'no agent in the fleet runs on a swarm manager', {
      collector: 'swarm',
      hint: 'Run an agent on a manager node of the swarm and approve its claim (fleetmesh agents approve NAME); list_agents shows pending claims.',
    });
  }
  let chosen: KnownSwarm | undefined;
  const cluster = typeof params.cluster === 'string' ? params.cluster : undefined;
  if (cluster !== undefined) {
    const matches = swarms.filter((s) => s.id === cluster || s.name === cluster || (cluster.length >= 4 && s.id.startsWith(cluster)));
    if (matches.length === 0) throw new FleetError('not_found', `no swarm is called "${cluster}"`, { hint: `Swarms in the fleet: ${listing()}.` });
    if (matches.length > 1) throw new FleetError('ambiguous', `"${cluster}" names ${matches.length} swarms`, { hint: `Swarms: ${listing()}.` });
    chosen = matches[0];
  } else if (swarms.length === 1) {
    chosen = swarms[0];
  } else {
    const hints = ['id', 'service', 'task', 'node', 'stack', 'name', 'resource'].map((key) => params[key]).filter((v): v is string => typeof v === 'string');
    const holding = swarms.filter((s) => hints.some((hint) => holds(s.snapshot, hint)));
    if (holding.length === 1) chosen = holding[0];
    else {
      throw new FleetError('ambiguous', `the fleet holds ${swarms.length} swarms and the call does not say which`, {
        hint: `Pass cluster: one of ${listing()}.`,
        details: { swarms: swarms.map((s) => ({ id: s.id, name: s.name })) },
      });
    }
  }
  const route = chosen as KnownSwarm;
  if (route.managers.length === 0) {
    throw new FleetError('agent_offline', `no approved manager agent of swarm ${route.name} is online`, {
      hint: 'list_agents shows the agents on its managers, their pending claims and when they were last seen.',
    });
  }
  return { clusterId: route.id, clusterName: route.name, managers: route.managers };
}
