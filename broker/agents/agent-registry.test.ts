import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/log/logger.ts';
import { waitFor } from '../../test/harness/wait.ts';
import type { AgentState } from '../store/agents-table.ts';
import { BrokerStore } from '../store/broker-store.ts';
import { AgentRegistry } from './agent-registry.ts';
import { AgentSession } from './agent-session.ts';

const HELLO = { agent_version: 'test', protocol_version: 1, actions: [], collectors: [], facts: {}, started_unix_ms: 0 };

describe('the registry with a silent agent', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  async function setup() {
    const dir = mkdtempSync(join(tmpdir(), 'fm-registry-'));
    const store = await BrokerStore.open(dir);
    await store.agents.insert({ id: 'quiet', name: 'quiet', tokenLabels: {}, publicKeySha256: 'k', enrolledAt: 0, tokenId: 't' });
    const registry = new AgentRegistry(store, { heartbeatIntervalMs: 1000, staleAfterMissed: 3, offlineAfterMissed: 6, storePollMs: 60_000 }, silentLogger);
    await registry.start();
    const ended: unknown[] = [];
    const session = new AgentSession({ write: () => true, end: () => ended.push('end'), emit: (_event, status) => ended.push(status) }, 'quiet', 'serial');
    const host = await registry.attach(session, HELLO, {});
    if (!host) throw new Error('the agent did not attach');
    const states: AgentState[] = [];
    registry.on('state', (changed) => states.push(changed.state));
    cleanups.push(async () => {
      await registry.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return { registry, session, host, states, ended, store };
  }

  it('is stale after three missed heartbeats, then the broker ends its stream after the grace and it is offline', async () => {
    const { registry, session, host, states, ended } = await setup();
    const heardAt = host.lastHeartbeatAt ?? 0;
    registry.sweep(heardAt + 2999);
    expect(states).toEqual([]);
    registry.sweep(heardAt + 3000);
    expect(states).toEqual(['stale']);
    registry.sweep(heardAt + 6000);
    expect(states).toEqual(['stale', 'offline']);
    expect(session.isOpen).toBe(false);
    expect(ended).toEqual([expect.objectContaining({ details: 'no heartbeat for 6000 ms' })]);
  });

  it('records the state changes queued together in one statement, the last change of an agent winning', async () => {
    const { registry, host, store } = await setup();
    const written: string[] = [];
    const setStates = store.agents.setStates.bind(store.agents);
    store.agents.setStates = (changes) => {
      written.push([...changes].map(([id, change]) => `${id}:${change.state}`).join(','));
      return setStates(changes);
    };
    const heardAt = host.lastHeartbeatAt ?? 0;
    registry.sweep(heardAt + 3000);
    registry.sweep(heardAt + 6000);
    await waitFor(async () => written.length > 0 && (await store.agents.get('quiet'))?.state === 'offline', { what: 'the agent offline in the store' });
    expect(written).toEqual(['quiet:offline']);
  });

  it('goes through stale even when one late sweep finds it silent past the grace', async () => {
    const { registry, host, states } = await setup();
    registry.sweep((host.lastHeartbeatAt ?? 0) + 60_000);
    registry.sweep((host.lastHeartbeatAt ?? 0) + 60_001);
    expect(states).toEqual(['stale', 'offline']);
  });
});
