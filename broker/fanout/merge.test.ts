import { describe, expect, it } from 'vitest';
import { inventoryExport, inventoryScan } from '../../shared/domains/checkup/inventory-actions.ts';
import { dockerList } from '../../shared/domains/docker/docker-actions.ts';
import { errorInfo } from '../../shared/errors/fleet-error.ts';
import type { Host } from '../agents/agent-registry.ts';
import type { CallOutcome } from '../agents/agent-session.ts';
import { GrantSet } from '../auth/grants.ts';
import type { Identity } from '../auth/identities.ts';
import { toEnvelope, toNode } from './merge.ts';

const NOW = 1_700_000_000_000;
const admin: Identity = { id: 'i1', name: 'admin', level: 3, grants: new GrantSet(['*:*=write']), expiresAt: Number.MAX_SAFE_INTEGER };

function row(name: string) {
  return {
    id: name,
    name,
    image: 'nginx',
    state: 'running',
    status: 'Up',
    created_unix_ms: 0,
    started_at_unix_ms: null,
    ports: [],
    health: null,
    restart_count: 0,
    labels: {},
  };
}

function outcome(name: string, answer: CallOutcome) {
  return { host: { name, version: '1.0.0' } as unknown as Host, outcome: answer, durationMs: 1 };
}

const answered = (names: string[], extra: Partial<Extract<CallOutcome, { ok: true }>> = {}): CallOutcome => ({
  ok: true,
  payload: { containers: names.map(row), count: names.length },
  failedCollectors: [],
  errors: [],
  ...extra,
});

describe('merge', () => {
  it("makes a host's answer its node: the action's fields beside host, availability and errors", () => {
    expect(toNode(outcome('web-1', answered(['nginx'])), dockerList, { identity: admin }, NOW)).toEqual({
      containers: [row('nginx')],
      count: 1,
      host: 'web-1',
      availability: 'available',
      sampled_at_unix_ms: NOW,
      failed_collectors: [],
      errors: [],
    });
  });

  it('marks a node partial when a collector failed, naming the host in each error', () => {
    const node = toNode(
      outcome('web-1', answered(['nginx'], { failedCollectors: ['docker'], errors: [errorInfo('collector_failed', 'stats timed out', '')] })),
      dockerList,
      { identity: admin },
      NOW,
    );
    expect(node).toMatchObject({ availability: 'partial', failed_collectors: ['docker'], errors: [{ code: 'collector_failed', host: 'web-1' }] });
  });

  it('marks a node unavailable for a failure, an empty answer or an answer off the schema', () => {
    const failed = toNode(outcome('a', { ok: false, error: errorInfo('agent_offline', 'offline', '') }), dockerList, { identity: admin }, NOW);
    const empty = toNode(outcome('b', { ok: true, payload: null, failedCollectors: [], errors: [] }), dockerList, { identity: admin }, NOW);
    const wrong = toNode(outcome('c', { ok: true, payload: { containers: 'none' }, failedCollectors: [], errors: [] }), dockerList, { identity: admin }, NOW);
    expect([failed, empty, wrong].map((node) => [node.availability, node.errors[0]?.code, node.errors[0]?.host])).toEqual([
      ['unavailable', 'agent_offline', 'a'],
      ['unavailable', 'internal', 'b'],
      ['unavailable', 'internal', 'c'],
    ]);
    expect(wrong.containers).toBeUndefined();
  });

  it('drops the list items the identity may not see, and counts only what is left', () => {
    const narrow: Identity = { ...admin, grants: new GrantSet(['container:web-1/nginx*']) };
    const node = toNode(outcome('web-1', answered(['nginx', 'nginx-2', 'redis'])), dockerList, { identity: narrow }, NOW);
    expect((node.containers as { name: string }[]).map((c) => c.name)).toEqual(['nginx', 'nginx-2']);
    expect(node.count).toBe(2);
    expect(node.errors).toEqual([]);
  });

  describe("a host's inventory", () => {
    const inventory = {
      hostname: 'web-1.internal',
      os: 'Debian GNU/Linux 12',
      arch: 'x64',
      docker_version: '27.5.1',
      swarm: { role: 'manager', cluster: 'prod', node_id: 'n0d3id' },
      proxmox: null,
      containers: ['nginx', 'redis', 'vault'].map((name) => ({ name, image: name, state: 'running', ports: [] })),
      listening_ports: [{ protocol: 'tcp', address: '0.0.0.0', port: 8200, process: 'vault' }],
      guests: [],
      container_count: 3,
      guest_count: 0,
      sampled_at_unix_ms: NOW,
    };
    const scanned = (extra: Record<string, unknown> = {}) =>
      outcome('web-1', { ok: true, payload: { ...inventory, ...extra }, failedCollectors: [], errors: [] });

    it('shows a container-only grant its containers and nothing of the host: no ports, node id, hidden count, OS or hostname', () => {
      const narrow: Identity = { ...admin, grants: new GrantSet(['container:web-1/nginx']) };
      for (const [action, extra] of [
        [inventoryScan, {}],
        [inventoryExport, { format: 'json' }],
      ] as const) {
        const node = toNode(scanned(extra), action, { identity: narrow }, NOW);
        const { host, availability, sampled_at_unix_ms, failed_collectors, errors, ...fields } = node;
        expect(fields, action.tool).toEqual({
          containers: [{ name: 'nginx', image: 'nginx', state: 'running', ports: [] }],
          container_count: 1,
          ...extra,
        });
        expect(JSON.stringify(node)).not.toMatch(/8200|n0d3id|web-1\.internal|Debian|vault|redis/);
        expect(availability).toBe('partial');
        expect(errors).toEqual([expect.objectContaining({ code: 'not_found', host: 'web-1' })]);
        expect(errors[0]?.message).toBe(
          `${action.tool} leaves out hostname, os, arch, docker_version, proxmox, guests, swarm, listening_ports, guest_count: they describe the whole of web-1, and this identity may see only some of its containers`,
        );
        expect(sampled_at_unix_ms).toBe(NOW);
      }
    });

    it('shows a host grant the whole inventory', () => {
      const hostGrant: Identity = { ...admin, grants: new GrantSet(['host:web-*']) };
      const node = toNode(scanned(), inventoryScan, { identity: hostGrant }, NOW);
      expect(node).toMatchObject({ ...inventory, availability: 'available', errors: [] });
    });
  });

  it('gathers nodes into an envelope in host order, counting those that responded', () => {
    const nodes = [
      toNode(outcome('web-1', answered([])), dockerList, { identity: admin }, NOW),
      toNode(outcome('db-1', { ok: false, error: errorInfo('deadline_exceeded', 'slow', '') }), dockerList, { identity: admin }, NOW),
    ];
    const envelope = toEnvelope(nodes);
    expect(envelope).toMatchObject({ schema_version: 1, targeted: 2, responded: 1, errors: [{ code: 'deadline_exceeded', host: 'db-1' }] });
    expect(envelope.hosts.map((h) => h.host)).toEqual(['db-1', 'web-1']);
  });

  it('never calls a node partial for an absent collector, and lists absent collectors once for the fleet', () => {
    const absentDocker = { ok: true as const, payload: { containers: [], count: 0 }, failedCollectors: [], errors: [], absentCollectors: ['docker'] };
    const node = toNode(outcome('edge-1', absentDocker), dockerList, { identity: admin }, NOW);
    expect(node).toMatchObject({ availability: 'available', failed_collectors: [], absent_collectors: ['docker'] });
    const envelope = toEnvelope(
      [
        node,
        toNode(outcome('edge-2', absentDocker), dockerList, { identity: admin }, NOW),
        toNode(outcome('web-1', answered(['nginx'])), dockerList, { identity: admin }, NOW),
      ],
      [{ collector: 'swarm', hosts: ['web-1'] }],
    );
    expect(envelope.absent_collectors).toEqual([
      { collector: 'docker', hosts: ['edge-1', 'edge-2'] },
      { collector: 'swarm', hosts: ['web-1'] },
    ]);
    expect(envelope.hosts.every((h) => h.absent_collectors === undefined && h.availability === 'available')).toBe(true);
    expect(toEnvelope([node]).absent_collectors).toEqual([{ collector: 'docker', hosts: ['edge-1'] }]);
    expect(toEnvelope([toNode(outcome('web-1', answered([])), dockerList, { identity: admin }, NOW)])).not.toHaveProperty('absent_collectors');
  });
});
