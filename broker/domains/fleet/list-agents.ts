import { listAgents } from '../../../shared/domains/fleet/fleet-actions.ts';
import type { Host } from '../../agents/agent-registry.ts';
import { assessClaims, type Claim } from '../../agents/claims.ts';
import type { Identity } from '../../auth/identities.ts';
import { mayRead } from '../../auth/visibility.ts';
import { defineBrokerAction } from '../../calls/broker-action.ts';
import { parseSelector } from '../../calls/selector.ts';

/**
 * An agent as list_agents and fleet://agents show it, with how far its claims
 * are believed. What describes the host itself (its figures, its collectors
 * and why they fail, the shared objects it claims) is the host's: a grant on
 * some of its containers shows the agent, not them.
 */
export function agentRow(host: Host, claims: readonly Claim[], identity: Identity) {
  const hostReadable = mayRead(identity, { type: 'host', name: host.name });
  return {
    name: host.name,
    id: host.id,
    state: host.state,
    version: host.version,
    labels: host.labels,
    collectors: hostReadable ? (host.hello?.collectors ?? []) : [],
    last_seen_unix_ms: host.lastSeenAt,
    state_since_unix_ms: host.stateSince,
    certificate_not_after_unix_ms: host.certNotAfter,
    sample: hostReadable ? host.sample : null,
    claims: hostReadable ? claims.map(({ role, object, status }) => ({ role, object, status })) : [],
  };
}

/**
 * A page of agents: a row is about 400 tokens, so 40 rows with the text's
 * table stay well within what a client takes in one result (25,000 tokens),
 * where every agent of a 10,000-host fleet was 18 MB.
 */
const DEFAULT_LIMIT = 40;

export const listAgentsHandler = defineBrokerAction({
  action: listAgents,
  async run(params, context) {
    const matches = params.selector ? parseSelector(params.selector) : () => true;
    const matching = context.visibleHosts().filter((host) => (params.state ? host.state === params.state : true) && matches(host.labels));
    const offset = params.offset ?? 0;
    const page = matching.slice(offset, offset + (params.limit ?? DEFAULT_LIMIT));
    const claims = page.length ? assessClaims(context.registry.list(), context.index) : new Map<string, Claim[]>();
    const agents = page.map((host) => agentRow(host, claims.get(host.id) ?? [], context.identity));
    const next = offset + page.length;
    return { agents, count: matching.length, ...(page.length && next < matching.length ? { next_offset: next } : {}) };
  },
});
