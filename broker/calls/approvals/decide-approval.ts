import { randomUUID } from 'node:crypto';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { ApprovalRow } from '../../store/approvals-table.ts';
import type { AuditPeople } from '../../store/audit-table.ts';
import type { BrokerStore } from '../../store/broker-store.ts';

/** Who decides: an identity at the console, or the operator at the broker's shell. */
export interface Decider {
  name: string;
  /** The deciding identity's id and level; absent for the operator's shell, which holds the broker's data dir. */
  identityId?: string;
  level?: number;
  people?: AuditPeople;
}

/**
 * Approves or denies a waiting call as another person: never its own caller
 * (nor the same person through another client), and, for an identity, only
 * one whose level covers the call. The decision is audited as the decider's
 * own row, beside the call's, which names the approver when it runs.
 */
export async function decideApproval(
  store: BrokerStore,
  id: string,
  decision: 'approve' | 'deny',
  decider: Decider,
  reason: string | undefined,
  nowMs = Date.now(),
): Promise<ApprovalRow> {
  const row = await store.approvals.get(id);
  if (!row) throw new FleetError('not_found', `no approval ${id}`, { hint: 'fleetmesh approvals list shows the calls that wait.' });
  if (row.state !== 'pending' || row.expiresAt <= nowMs) {
    throw new FleetError('conflict', `approval ${id} is ${row.state === 'pending' ? 'expired' : row.state} already`, {
      hint: 'The call has its answer; nothing to decide.',
    });
  }
  const same = decider.identityId === row.identityId || decider.name === row.identity || (row.subject !== null && decider.people?.subject === row.subject);
  if (same) throw new FleetError('forbidden', `${decider.name} made this call: another person must decide it`, { hint: 'Ask someone else to approve it.' });
  if (decider.level !== undefined && decider.level < row.level) {
    throw new FleetError('forbidden', `${row.tool} is level ${row.level}, above ${decider.name}'s level ${decider.level}`, {
      hint: 'Someone whose level covers the call must decide it.',
    });
  }
  const state = decision === 'approve' ? 'approved' : 'denied';
  if (!(await store.approvals.decide(id, state, { by: decider.name, at: nowMs, reason: reason ?? null }))) {
    throw new FleetError('conflict', `approval ${id} was decided or expired meanwhile`, { hint: 'fleetmesh approvals list shows where it stands.' });
  }
  const callId = randomUUID();
  await store.audit.begin({
    callId,
    startedAt: nowMs,
    identity: decider.name,
    tool: `approvals ${decision}`,
    action: row.action,
    level: row.level,
    targets: row.targets,
    arguments: { approval: id, call_id: row.callId, caller: row.identity, tool: row.tool, ...(reason ? { reason } : {}) },
    outcome: 'pending',
    errorCode: null,
    ...decider.people,
  });
  await store.audit.complete(callId, { outcome: 'ok', errorCode: null, finishedAt: nowMs });
  return { ...row, state, decidedBy: decider.name, decidedAt: nowMs, reason: reason ?? null };
}
