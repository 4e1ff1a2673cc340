import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SwarmSnapshot } from '../../shared/engine/records.ts';
import { silentLogger } from '../../shared/log/logger.ts';
import { AgentRegistry, type Host } from '../agents/agent-registry.ts';
import { DockerIndexer } from '../domains/docker/docker-indexer.ts';
import { ProxmoxIndexer } from '../domains/proxmox/proxmox-indexer.ts';
import { SwarmIndexer } from '../domains/swarm/swarm-indexer.ts';
import { BrokerMetrics } from '../metrics/broker-metrics.ts';
import { BrokerStore } from '../store/broker-store.ts';
import { FleetIndex } from './fleet-index.ts';

function snapshot(name: string, takenUnixMs: number): SwarmSnapshot {
  return {
    cluster_id: 'swarm-1',
    cluster_name: name,
    manager_node_id: 'n1',
    taken_unix_ms: takenUnixMs,
    services: [],
    tasks: [],
    nodes: [],
    networks: [],
    configs: [],
    secrets: [],
    volumes: [],
  };
}

describe('the fleet index as reports arrive', () => {
  const cleanups: (() => void | Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  /** An index over a registry holding a manager agent the operator approved, and one nobody approved. */
  async function setup() {
    const dir = mkdtempSync(join(tmpdir(), 'fm-index-'));
    const store = await BrokerStore.open(dir);
    for (const id of ['approved', 'rogue']) {
      await store.agents.insert({ id, name: id, tokenLabels: {}, publicKeySha256: id, enrolledAt: 0, tokenId: 't' });
    }
    await store.roles.grant('approved', { role: 'swarm-manager', scope: 'swarm-1', grantedAt: 0, grantedBy: 'operator' });
    const registry = new AgentRegistry(store, { heartbeatIntervalMs: 1000, staleAfterMissed: 3, offlineAfterMissed: 6, storePollMs: 60_000 }, silentLogger);
    await registry.start();
    const metrics = new BrokerMetrics();
    const index = new FleetIndex(registry, store, silentLogger, metrics);
    index.start();
    cleanups.push(async () => {
      index.stop();
      await registry.stop();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const host = (id: string) => {
      const found = registry.get(id) as Host;
      found.hello = {
        agent_version: '',
        protocol_version: 1,
        actions: [],
        collectors: [],
        facts: { swarm_role: 'manager', swarm_id: 'swarm-1', swarm_node_id: id },
        started_unix_ms: 0,
      };
      return found;
    };
    return { registry, index, metrics, approved: host('approved'), rogue: host('rogue') };
  }

  it('takes snapshots from the approved manager only, ordered by receipt, whatever date they carry', async () => {
    const { registry, index, metrics, approved, rogue } = await setup();
    registry.emit('report', approved, 'swarm_snapshot', snapshot('first', 9e15), 0);
    registry.emit('report', approved, 'swarm_snapshot', snapshot('second', 1), 0);
    expect(index.indexer(SwarmIndexer).swarm('swarm-1')?.snapshot.cluster_name).toBe('second');
    expect(index.indexer(SwarmIndexer).swarm('swarm-1')?.snapshot.taken_unix_ms).toBeLessThan(9e15);
    registry.emit('report', rogue, 'swarm_snapshot', snapshot('forged', Date.now() + 1e9), 0);
    expect(index.indexer(SwarmIndexer).swarm('swarm-1')?.snapshot.cluster_name).toBe('second');
    expect(metrics.render([])).toContain('fleetmesh_reports_dropped_total{kind="swarm_snapshot",reason="not_role_holder"} 1');
  });

  it('drops malformed reports of every kind and keeps the last good state', async () => {
    const { registry, index, metrics, approved } = await setup();
    registry.emit('report', approved, 'swarm_snapshot', snapshot('good', 1), 0);
    registry.emit('report', approved, 'swarm_snapshot', { cluster_id: 'swarm-1' }, 0);
    registry.emit('report', approved, 'container_inventory', [], 0);
    registry.emit('report', approved, 'proxmox_guests', { guests: 'none' }, 0);
    expect(index.indexer(SwarmIndexer).swarm('swarm-1')?.snapshot.cluster_name).toBe('good');
    expect(index.indexer(DockerIndexer).inventoryEntries()).toEqual([]);
    expect(index.indexer(ProxmoxIndexer).guestEntries()).toEqual([]);
    const text = metrics.render([]);
    for (const kind of ['swarm_snapshot', 'container_inventory', 'proxmox_guests']) {
      expect(text).toContain(`fleetmesh_reports_dropped_total{kind="${kind}",reason="malformed"} 1`);
    }
  });

  it('forgets what a manager reported once it loses the role', async () => {
    const { registry, index, approved } = await setup();
    registry.emit('report', approved, 'swarm_snapshot', snapshot('good', 1), 0);
    approved.roles = [];
    registry.emit('state', approved, approved.state);
    expect(index.indexer(SwarmIndexer).swarm('swarm-1')).toBeUndefined();
  });

  it('drops reports of kinds no domain declares under one metrics label, whatever kind they name', async () => {
    const { registry, metrics, approved } = await setup();
    registry.emit('report', approved, 'made_up_kind', {}, 0);
    registry.emit('report', approved, 'another_one', {}, 0);
    const text = metrics.render([]);
    expect(text).toContain('fleetmesh_reports_dropped_total{kind="other",reason="unknown_kind"} 2');
    expect(text).not.toContain('made_up_kind');
  });

  it("takes a container's events into its host's part of the index", async () => {
    const { registry, index, approved } = await setup();
    const event = { time_unix_ms: 1, type: 'container', action: 'die', id: 'abcdef0123456789', name: 'web', image: 'nginx', exit_code: 2, attributes: {} };
    registry.emit('report', approved, 'container_event', event, 0);
    expect(index.indexer(DockerIndexer).events.recentFailures('approved', 'approved', 'abcdef012345')).toMatchObject([{ task: 'web', exit_code: 2 }]);
    registry.emit('report', approved, 'container_event', { ...event, attributes: 'none' }, 0);
    expect(index.indexer(DockerIndexer).events.recentFailures('approved', 'approved', 'abcdef012345')).toHaveLength(1);
  });
});
