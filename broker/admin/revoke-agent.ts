import { FleetError } from '../../shared/errors/fleet-error.ts';
import type { AgentRow } from '../store/agents-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';

/** Finds an unrevoked agent by id or name, or says which names exist. */
export async function findAgent(store: BrokerStore, idOrName: string): Promise<AgentRow> {
  const row = (await store.agents.get(idOrName)) ?? (await store.agents.findLiveByName(idOrName));
  if (!row || row.revokedAt !== null) {
    const names = (await store.agents.list()).map((a) => a.name);
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
export function revokeAgent(store: BrokerStore, agentId: string, reason: string, now = Date.now()): Promise<string[]> {
  return store.transaction(async () => {
    const serials = await store.certificates.revokeAllOf(agentId, reason, now);
    await store.agents.markRevoked(agentId, reason, now);
    return serials;
  });
}
