import type { Action } from '../../shared/catalog/action.ts';
import type { DropReason, ReportRecorder } from '../index/fleet-index.ts';
import type { AgentState } from '../store/agents-table.ts';
import type { AuditOutcome } from '../store/audit-table.ts';

/** How a tool call ended, in the audit log's words. */
export type CallOutcome = Exclude<AuditOutcome, 'pending' | 'interrupted'>;

/** What the action runner reports when a call is over. */
interface FinishedCall {
  tool: string;
  action: Action;
  outcome: CallOutcome;
  durationMs: number;
}

/** The one hook the action runner calls; BrokerMetrics implements it. */
export interface CallRecorder {
  callFinished(call: FinishedCall): void;
}

/** Upper bounds of the fan-out latency buckets, in seconds: from a LAN round trip to the 60 s timeout cap. */
const FANOUT_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

const AGENT_STATES: readonly AgentState[] = ['online', 'stale', 'offline'];

/** A label value as the Prometheus text format wants it: backslash, quote and newline escaped. */
function labelValue(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n');
}

/**
 * The broker's Prometheus metrics, kept in memory since the process started:
 * tool calls by tool and outcome, and how long calls that went out to agents
 * took from arrival to merged answer. Agents by state are read from the
 * registry at each scrape, so they are never stale.
 */
export class BrokerMetrics implements CallRecorder, ReportRecorder {
  private readonly calls = new Map<string, { tool: string; outcome: CallOutcome; count: number }>();
  private readonly droppedReports = new Map<string, { kind: string; reason: DropReason; count: number }>();
  private readonly bucketCounts = FANOUT_BUCKETS_S.map(() => 0);
  private fanOutCount = 0;
  private fanOutSumS = 0;

  callFinished(call: FinishedCall): void {
    const key = `${call.tool}\u0000${call.outcome}`;
    const entry = this.calls.get(key) ?? { tool: call.tool, outcome: call.outcome, count: 0 };
    entry.count += 1;
    this.calls.set(key, entry);
    // A refused call never reached an agent; broker actions never leave the broker.
    if (call.action.runsOn === 'broker' || call.outcome === 'refused') return;
    const seconds = call.durationMs / 1000;
    this.fanOutCount += 1;
    this.fanOutSumS += seconds;
    FANOUT_BUCKETS_S.forEach((bound, index) => {
      if (seconds <= bound) this.bucketCounts[index] = (this.bucketCounts[index] ?? 0) + 1;
    });
  }

  reportDropped(kind: string, reason: DropReason): void {
    const key = `${kind}\u0000${reason}`;
    const entry = this.droppedReports.get(key) ?? { kind, reason, count: 0 };
    entry.count += 1;
    this.droppedReports.set(key, entry);
  }

  /** The text exposition format (version 0.0.4). */
  render(agentStates: readonly AgentState[]): string {
    const lines: string[] = [];
    lines.push('# HELP fleetmesh_agents Enrolled, unrevoked agents by connection state.', '# TYPE fleetmesh_agents gauge');
    for (const state of AGENT_STATES) lines.push(`fleetmesh_agents{state="${state}"} ${agentStates.filter((s) => s === state).length}`);
    lines.push('# HELP fleetmesh_tool_calls_total MCP tool calls by tool and outcome.', '# TYPE fleetmesh_tool_calls_total counter');
    const calls = [...this.calls.values()].sort((a, b) => a.tool.localeCompare(b.tool) || a.outcome.localeCompare(b.outcome));
    for (const { tool, outcome, count } of calls) lines.push(`fleetmesh_tool_calls_total{tool="${labelValue(tool)}",outcome="${outcome}"} ${count}`);
    lines.push(
      '# HELP fleetmesh_reports_dropped_total Agent reports the broker refused: of an undeclared kind, malformed, or about a shared object the agent holds no role over.',
      '# TYPE fleetmesh_reports_dropped_total counter',
    );
    const dropped = [...this.droppedReports.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.reason.localeCompare(b.reason));
    for (const { kind, reason, count } of dropped) lines.push(`fleetmesh_reports_dropped_total{kind="${labelValue(kind)}",reason="${reason}"} ${count}`);
    lines.push(
      '# HELP fleetmesh_fanout_duration_seconds Time from a tool call to its merged answer, for calls sent to agents.',
      '# TYPE fleetmesh_fanout_duration_seconds histogram',
    );
    FANOUT_BUCKETS_S.forEach((bound, index) => {
      lines.push(`fleetmesh_fanout_duration_seconds_bucket{le="${bound}"} ${this.bucketCounts[index] ?? 0}`);
    });
    lines.push(`fleetmesh_fanout_duration_seconds_bucket{le="+Inf"} ${this.fanOutCount}`);
    lines.push(`fleetmesh_fanout_duration_seconds_sum ${this.fanOutSumS}`, `fleetmesh_fanout_duration_seconds_count ${this.fanOutCount}`);
    return `${lines.join('\n')}\n`;
  }
}
