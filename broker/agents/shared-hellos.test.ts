import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOG } from '../../shared/catalog/catalog.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import type { StoredHello } from '../store/agents-table.ts';
import { BrokerStore } from '../store/broker-store.ts';
import { AgentRegistry } from './agent-registry.ts';
import { AgentSession } from './agent-session.ts';
import { offersAction, sharedHello } from './shared-hellos.ts';

/** A real agent's Hello as the connect handler stores it: every catalog action, sorted, and its collectors. */
function hello(version = '1.0.0'): StoredHello {
  return {
    agent_version: version,
    protocol_version: 1,
    // New strings each time, as each decoded Hello brings its own.
    actions: CATALOG.map((action) => `${action.id}`.slice(0)).sort(),
    collectors: ['system', 'docker', 'swarm'].map((name) => ({ name, available: name !== 'swarm', reason: '', ...(name === 'swarm' ? { absent: true } : {}) })),
    facts: { hostname: `host-${version}` },
    started_unix_ms: 1,
  };
}

describe('Hellos shared between like agents', () => {
  it('keeps one copy of a list every like agent announces, and answers which actions a host offers', () => {
    const first = sharedHello(hello());
    const second = sharedHello(hello());
    expect(second.actions).toBe(first.actions);
    expect(second.collectors).toBe(first.collectors);
    expect(first.actions).toEqual(hello().actions);
    expect(first.collectors).toEqual(hello().collectors);
    // What is only this agent's stays its own.
    expect(sharedHello(hello('2.0.0')).facts).toEqual({ hostname: 'host-2.0.0' });
    expect(offersAction(first, 'docker.list')).toBe(true);
    expect(offersAction(first, 'no.such.action')).toBe(false);
    // A shared list cannot be changed through one host.
    expect(() => first.actions.push('rogue.action')).toThrow(TypeError);
    expect(() => {
      (first.collectors[0] as { available: boolean }).available = false;
    }).toThrow(TypeError);
  });

  it('past 1,024 distinct lists keeps each Hello its own, still answering right', () => {
    for (let i = 0; i < 1100; i++) sharedHello({ ...hello(), actions: [`churn.${i}`] });
    const own = sharedHello({ ...hello(), actions: ['late.one', 'late.two'] });
    expect(sharedHello({ ...hello(), actions: ['late.one', 'late.two'] }).actions).not.toBe(own.actions);
    expect(offersAction(own, 'late.two')).toBe(true);
    expect(offersAction(own, 'late.three')).toBe(false);
  });

  it('the registry holds the agents that attach with like Hellos on one copy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fm-hellos-'));
    const store = await BrokerStore.open(dir);
    const registry = new AgentRegistry(store, { heartbeatIntervalMs: 1000, staleAfterMissed: 3, offlineAfterMissed: 6, storePollMs: 60_000 }, silentLogger);
    try {
      await registry.start();
      const hosts = [];
      for (const id of ['a', 'b']) {
        await store.agents.insert({ id, name: id, tokenLabels: {}, publicKeySha256: id, enrolledAt: 0, tokenId: 't' });
        const session = new AgentSession({ write: () => true, end: () => {}, emit: () => {} }, id, `serial-${id}`);
        hosts.push(await registry.attach(session, hello(), {}));
      }
      expect(hosts[1]?.hello?.actions).toBe(hosts[0]?.hello?.actions);
      expect(hosts[1]?.hello?.actions).toContain('agent.info');
    } finally {
      await registry.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
