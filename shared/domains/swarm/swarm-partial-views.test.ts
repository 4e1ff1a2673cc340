import { describe, expect, it } from 'vitest';
import type { VisibleResources } from '../../catalog/partial-view.ts';
import { clusterStatusView, eventsView, logsView, topologyView } from './swarm-partial-views.ts';

/** A scope that sees service web, its tasks and node n1 only. */
const scope: VisibleResources = {
  sees: (type, ref) => (type === 'service' && ref === 'web') || (type === 'node' && ref === 'n1') || (type === 'task' && ref === 'web.1'),
  count: (type) => (type === 'service' ? 1 : type === 'node' ? 1 : 0),
};

describe('swarm answers under grants', () => {
  it('keeps only the events of resources the identity sees, tasks through their service', () => {
    const answer = {
      events: [
        { type: 'service', id: 's1', name: 'web', action: 'update', time_unix_ms: 1 },
        { type: 'service', id: 's2', name: 'db', action: 'update', time_unix_ms: 1 },
        { type: 'task', id: 't1', name: 'web.2', action: 'create', time_unix_ms: 1 },
        { type: 'secret', id: 'x', name: 'db-password', action: 'create', time_unix_ms: 1 },
      ],
      count: 4,
    };
    const filtered = eventsView.filter(answer, scope);
    expect((filtered.events as { name: string }[]).map((e) => e.name)).toEqual(['web', 'web.2']);
    expect(filtered.count).toBe(2);
  });

  it('keeps the log lines of visible services and drops the others with their errors', () => {
    const answer = {
      scope: 'cluster',
      lines: [
        { service: 'web', text: 'a' },
        { service: 'db', text: 'b' },
      ],
      count: 2,
      services: ['web', 'db'],
      truncated: false,
      errors: [{ service: 'db', message: 'gone' }],
    };
    expect(logsView.filter(answer, scope)).toMatchObject({ lines: [{ service: 'web' }], count: 1, services: ['web'], errors: [] });
  });

  it('cuts topology edges that reach a hidden resource', () => {
    const answer = {
      view: 'placement',
      nodes: [
        { id: 'n1', name: 'n1', type: 'node' },
        { id: 's1', name: 'web', type: 'service' },
        { id: 's2', name: 'db', type: 'service' },
      ],
      edges: [
        { from: 'n1', to: 's1' },
        { from: 'n1', to: 's2' },
      ],
    };
    const filtered = topologyView.filter(answer, scope);
    expect(filtered.nodes).toHaveLength(2);
    expect(filtered.edges).toEqual([{ from: 'n1', to: 's1' }]);
  });

  it('shows a cluster status made only of what the identity sees', () => {
    const answer = {
      health: 'degraded',
      problems: ['service db: 0/1 running (pending)', 'service web: 1/2 running (starting)', 'node n2 is down'],
      nodes: { total: 2, ready: 1, down: ['n2'], draining: [], managers: 1, reachable_managers: 1 },
      services: {
        total: 5,
        converged: 3,
        not_converged: [
          { name: 'db', running: 0, desired: 1, state: 'pending' },
          { name: 'web', running: 1, desired: 2, state: 'starting' },
        ],
        restarting: [],
      },
      rollouts: [{ service: 'db', state: 'updating', message: '' }],
      capacity: { total_cpu_cores: 8, reserved_cpu_cores: 1, total_memory_bytes: 1, reserved_memory_bytes: 1, max_node_cpu_cores: 4, max_node_memory_bytes: 1 },
      tasks_by_state: { running: 4 },
    };
    const filtered = clusterStatusView.filter(answer, scope);
    expect(JSON.stringify(filtered)).not.toMatch(/db|n2/);
    expect(filtered.problems).toEqual(['service web: 1/2 running (starting)']);
    expect(filtered.services).toMatchObject({ total: 1, converged: 0 });
  });

  it('refuses a log read naming a service, task or stack the identity does not see, as if it did not exist', () => {
    expect(() => logsView.check?.({ service: 'db' }, scope, 'prod')).toThrow('no service "db" in swarm prod');
    expect(() => logsView.check?.({ task: 'db.1' }, scope, 'prod')).toThrow('no task "db.1" in swarm prod');
    expect(() => logsView.check?.({ stack: 'shop' }, scope, 'prod')).toThrow('no stack "shop" in swarm prod');
    expect(() => logsView.check?.({ service: 'web', task: 'web.3' }, scope, 'prod')).not.toThrow();
  });
});
