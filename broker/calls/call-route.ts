import type { Action, Level } from '../../shared/catalog/action.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { Identity } from '../auth/identities.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import type { LateAudit } from './call-audit.ts';

export interface RunContext {
  /** The tool name the caller used, for the audit log. */
  tool: string;
  signal: AbortSignal;
  /** Progress as hosts settle and as they stream: done of total, and what just happened. */
  onProgress?: (done: number, total: number, message: string) => void;
  /** What the broker did on the caller's behalf (a host past its deadline or answering late, a failover to another manager), for the caller alone. */
  onLog?: CallLog;
  /** The call's audit row is committed (calls of level 1 or more), before anything is sent. */
  onAudited?: (auditId: string) => void;
  /** The call waits for another identity's approval (the message says which, and how to give it), then waits no more (undefined). */
  onApproval?: (waiting: string | undefined) => void;
}

/** The severities a call's log uses (a subset of MCP's). */
export type CallLogLevel = 'info' | 'notice' | 'warning';
export type CallLog = (level: CallLogLevel, message: string, fields: Record<string, unknown>) => void;

/** What a call produced: the complete structured result, and whether it counts as a failure. Refusals are thrown. */
export interface RunResult {
  action: Action;
  structured: Record<string, unknown>;
  isError: boolean;
  shape: 'node' | 'envelope' | 'broker';
}

/** One call as a route sees it, once the action is known to be visible to the caller. */
export interface RouteCall {
  identity: Identity;
  action: Action;
  args: Record<string, unknown>;
  context: RunContext;
  /** The level the agents are told the caller acts at. */
  callerLevel: Level;
  /** Records the targets in the audit, once every check passed; resolves once committed, before anything is sent. */
  begin(targets: string[]): Promise<void>;
  late: LateAudit | undefined;
  /** The audit row's id (calls that have one): a broker of the cluster holding a target notes late answers there. */
  auditId: string | undefined;
}

/** What every route reads of the broker. */
export interface RouteDeps {
  registry: AgentRegistry;
  index: FleetIndex;
  log: Logger;
}
