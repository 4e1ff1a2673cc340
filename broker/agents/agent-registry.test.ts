import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../shared/log/logger.ts';
import type { AgentState } from '../store/agents-table.ts';
import { BrokerStore } from '../store/broker-store.ts';
import { AgentRegistry } from './agent-registry.ts';
import { AgentSession } from './agent-session.ts';

const HELLO = { agent_version: 'test', protocol_version: 1, actions: [], collectors: [], facts: {}, started_unix_ms: 0 };

describe('the registry with a silent agent', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  function setup() {
    const dir = mkdtempSync(join(tmpdir(), 'fm-registry-'));
    const store = BrokerStore.open(dir);
    store.agents.insert({ id: 'quiet', name: 'quiet', tokenLabels: {}, publicKeySha256: 'k', enrolledAt: 0, tokenId: 't' });
    const registry = new AgentRegistry(store, { heartbeatIntervalMs: 1000, staleAfterMissed: 3, offlineAfterMissed: 6, storePollMs: 60_000 }, silentLogger);
    registry.start();
    const ended: unknown[] = [];
    const session = new AgentSession({ write: () => true, end: () => ended.push('end'), emit: (_event, status) => ended.push(status) }, 'quiet', 'serial');
    const host = registry.attach(session, HELLO, {});
    const states: AgentState[] = [];
    registry.on('state', (changed) => states.push(changed.state));
    cleanups.push(() => {
      registry.stop();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    return { registry, session, host, states, ended };
  }

  it('is stale after three missed heartbeats, then the broker ends its stream after the grace and it is offline', () => {
    const { registry, session, host, states, ended } = setup();
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

  it('goes through stale even when one late sweep finds it silent past the grace', () => {
    const { registry, host, states } = setup();
    registry.sweep((host.lastHeartbeatAt ?? 0) + 60_000);
    registry.sweep((host.lastHeartbeatAt ?? 0) + 60_001);
    expect(states).toEqual(['stale', 'offline']);
  });
});
