import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerStore } from '../store/broker-store.ts';
import { approveAgent, withdrawAgentRoles } from './approve-agent.ts';

describe('approving an agent claim', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  function storeWith(facts: Record<string, string>): BrokerStore {
    const dir = mkdtempSync(join(tmpdir(), 'fm-approve-'));
    const store = BrokerStore.open(dir);
    cleanups.push(() => {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    store.agents.insert({ id: 'a1', name: 'mgr-1', tokenLabels: {}, publicKeySha256: 'k', enrolledAt: 0, tokenId: 't' });
    const hello = { agent_version: '', protocol_version: 1, actions: [], collectors: [], facts, started_unix_ms: 0 };
    store.agents.recordHello('a1', { version: '', hello, reportedLabels: {}, now: 0 });
    return store;
  }

  it('binds each claim of the last Hello to the object it names, and withdraws them', () => {
    const store = storeWith({ swarm_role: 'manager', swarm_id: 'swarm-1', swarm_node_id: 'n1', proxmox_cluster: 'lab', proxmox_node: 'pve1' });
    const { grants } = approveAgent(store, { agent: 'mgr-1' }, 5);
    expect(grants.map((g) => [g.role, g.scope, g.grantedBy])).toEqual([
      ['swarm-manager', 'swarm-1', 'operator'],
      ['pve-member', 'lab', 'operator'],
    ]);
    expect(store.roles.all().get('a1')).toHaveLength(2);
    expect(withdrawAgentRoles(store, 'mgr-1', 'pve-member').withdrawn).toBe(1);
    expect(
      store.roles
        .all()
        .get('a1')
        ?.map((g) => g.role),
    ).toEqual(['swarm-manager']);
  });

  it('refuses an agent that claims nothing, and an unknown role', () => {
    const store = storeWith({ swarm_role: 'worker', swarm_id: 'swarm-1' });
    expect(() => approveAgent(store, { agent: 'mgr-1' })).toThrow(/claims no role/);
    expect(() => approveAgent(store, { agent: 'mgr-1', role: 'king' })).toThrow(/"king" is not a role/);
    expect(approveAgent(store, { agent: 'mgr-1', role: 'swarm-manager', scope: 'swarm-1' }).grants).toHaveLength(1);
  });
});
