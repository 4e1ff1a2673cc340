import { describe, expect, it } from 'vitest';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import { listAgents } from '../../shared/domains/fleet/fleet-actions.ts';
import { BrokerMetrics } from './broker-metrics.ts';

/** The value of one sample line, by its full name and labels. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the broker metrics', () => {
  it('counts calls by tool and outcome, and agents by state', () => {
    const metrics = new BrokerMetrics();
    metrics.callFinished({ tool: 'list_agents', action: listAgents, outcome: 'ok', durationMs: 1 });
    metrics.callFinished({ tool: 'list_agents', action: listAgents, outcome: 'ok', durationMs: 1 });
    metrics.callFinished({ tool: 'agent_info', action: agentInfo, outcome: 'partial', durationMs: 30 });
    const text = metrics.render(['online', 'online', 'stale']);
    expect(sample(text, 'fleetmesh_tool_calls_total{tool="list_agents",outcome="ok"}')).toBe(2);
    expect(sample(text, 'fleetmesh_tool_calls_total{tool="agent_info",outcome="partial"}')).toBe(1);
    expect(sample(text, 'fleetmesh_agents{state="online"}')).toBe(2);
    expect(sample(text, 'fleetmesh_agents{state="stale"}')).toBe(1);
    expect(sample(text, 'fleetmesh_agents{state="offline"}')).toBe(0);
    expect(text).toMatch(/^# TYPE fleetmesh_tool_calls_total counter$/m);
    expect(text.endsWith('\n')).toBe(true);
  });

  it('keeps a cumulative fan-out histogram of calls that went to agents only', () => {
    const metrics = new BrokerMetrics();
    metrics.callFinished({ tool: 'agent_info', action: agentInfo, outcome: 'ok', durationMs: 20 });
    metrics.callFinished({ tool: 'agent_info', action: agentInfo, outcome: 'error', durationMs: 3000 });
    // Neither a broker action nor a refused call reaches an agent.
    metrics.callFinished({ tool: 'list_agents', action: listAgents, outcome: 'ok', durationMs: 5 });
    metrics.callFinished({ tool: 'agent_info', action: agentInfo, outcome: 'refused', durationMs: 1 });
    const text = metrics.render([]);
    expect(sample(text, 'fleetmesh_fanout_duration_seconds_bucket{le="0.01"}')).toBe(0);
    expect(sample(text, 'fleetmesh_fanout_duration_seconds_bucket{le="0.025"}')).toBe(1);
    expect(sample(text, 'fleetmesh_fanout_duration_seconds_bucket{le="2.5"}')).toBe(1);
    expect(sample(text, 'fleetmesh_fanout_duration_seconds_bucket{le="5"}')).toBe(2);
    expect(sample(text, 'fleetmesh_fanout_duration_seconds_bucket{le="+Inf"}')).toBe(2);
    expect(sample(text, 'fleetmesh_fanout_duration_seconds_count')).toBe(2);
    expect(sample(text, 'fleetmesh_fanout_duration_seconds_sum')).toBeCloseTo(3.02);
  });

  it('escapes label values', () => {
    const metrics = new BrokerMetrics();
    metrics.callFinished({ tool: 'a"b\\c\nd', action: listAgents, outcome: 'refused', durationMs: 0 });
    expect(metrics.render([])).toContain('fleetmesh_tool_calls_total{tool="a\\"b\\\\c\\nd",outcome="refused"} 1');
  });

  it('counts dropped reports by kind and reason', () => {
    const metrics = new BrokerMetrics();
    metrics.reportDropped('swarm_snapshot', 'not_role_holder');
    metrics.reportDropped('swarm_snapshot', 'not_role_holder');
    metrics.reportDropped('container_inventory', 'malformed');
    const text = metrics.render([]);
    expect(sample(text, 'fleetmesh_reports_dropped_total{kind="swarm_snapshot",reason="not_role_holder"}')).toBe(2);
    expect(sample(text, 'fleetmesh_reports_dropped_total{kind="container_inventory",reason="malformed"}')).toBe(1);
  });
});
