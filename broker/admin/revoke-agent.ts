import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { AgentRow } from '../store/agents-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';

/** Finds an unrevoked agent by id or name, or says which names exist. */
export function findAgent(store: BrokerStore, idOrName: string): AgentRow {
  const row = store.agents.get(idOrName) ?? store.agents.findLiveByName(idOrName);
  if (!row || row.revokedAt !== null) {
    const names = store.agents.list().map((a) => a.name);
    throw new FleetError('not_found', `no enrolled agent is called "${idOrName}"`, {
      hint: names.length ? `Enrolled agents: ${names.join(', ')}.` : 'No agent is enrolled yet.',
    });
  }
  return row;
}

/**
 * Revokes every certificate of an agent and marks it revoked, in one
 * transaction. A running broker closes the agent's stream as soon as it sees
 * the change (it watches the store), and refuses the agent from then on.
 */
export function revokeAgent(store: BrokerStore, agentId: string, reason: string, now = Date.now()): string[] {
  return store.transaction(() => {
    const serials = store.certificates.revokeAllOf(agentId, reason, now);
    store.agents.markRevoked(agentId, reason, now);
    return serials;
  });
}
