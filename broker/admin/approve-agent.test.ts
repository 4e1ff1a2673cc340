import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerStore } from '../store/broker-store.ts';
import { approveAgent, withdrawAgentRoles } from './approve-agent.ts';

describe('approving an agent claim', () => {
  const cleanups: (() => void | Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function storeWith(facts: Record<string, string>): Promise<BrokerStore> {
    const dir = mkdtempSync(join(tmpdir(), 'fm-approve-'));
    const store = await BrokerStore.open(dir);
    cleanups.push(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await store.agents.insert({ id: 'a1', name: 'mgr-1', tokenLabels: {}, publicKeySha256: 'k', enrolledAt: 0, tokenId: 't' });
    const hello = { agent_version: '', protocol_version: 1, actions: [], collectors: [], facts, started_unix_ms: 0 };
    await store.agents.recordHello('a1', { version: '', hello, reportedLabels: {}, now: 0 });
    return store;
  }

  it('binds each claim of the last Hello to the object it names, and withdraws them', async () => {
    const store = await storeWith({ swarm_role: 'manager', swarm_id: 'swarm-1', swarm_node_id: 'n1', proxmox_cluster: 'lab', proxmox_node: 'pve1' });
    const { grants } = await approveAgent(store, { agent: 'mgr-1' }, 5);
    expect(grants.map((g) => [g.role, g.scope, g.grantedBy])).toEqual([
      ['swarm-manager', 'swarm-1', 'operator'],
      ['pve-member', 'lab', 'operator'],
    ]);
    expect((await store.roles.all()).get('a1')).toHaveLength(2);
    expect((await withdrawAgentRoles(store, 'mgr-1', 'pve-member')).withdrawn).toBe(1);
    expect((await store.roles.all()).get('a1')?.map((g) => g.role)).toEqual(['swarm-manager']);
  });

  it('refuses an agent that claims nothing, and an unknown role', async () => {
    const store = await storeWith({ swarm_role: 'worker', swarm_id: 'swarm-1' });
    await expect(approveAgent(store, { agent: 'mgr-1' })).rejects.toThrow(/claims no role/);
    await expect(approveAgent(store, { agent: 'mgr-1', role: 'king' })).rejects.toThrow(/"king" is not a role/);
    expect((await approveAgent(store, { agent: 'mgr-1', role: 'swarm-manager', scope: 'swarm-1' })).grants).toHaveLength(1);
  });
});
