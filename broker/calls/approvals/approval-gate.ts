import { createHash, randomBytes } from 'node:crypto';
import type { Action } from '../../../shared/catalog/action.ts';
import { FleetError } from '../../../shared/errors/fleet-error.ts';
import type { Identity } from '../../auth/identities.ts';
import type { BrokerStore } from '../../store/broker-store.ts';
import type { ApprovalRule } from './approval-rule.ts';

/** One call asking for approval: who, exactly what, and where its caller hears that it waits. */
export interface ApprovalRequest {
  callId: string;
  identity: Identity;
  tool: string;
  action: Action;
  targets: string[];
  /** The arguments as the audit keeps them, for the approver to read. */
  shownArguments: Record<string, unknown>;
  /** The arguments as called, whose digest binds the approval to them. */
  args: Record<string, unknown>;
  signal: AbortSignal;
  /** Told what the call waits for (and how to approve it), then undefined once it is approved (a refusal ends the call). */
  onWaiting?: ((message: string | undefined) => void) | undefined;
}

/** How often a waiting call looks at its approval: the CLI and other brokers decide in other processes. */
const POLL_MS = 250;

const digestOf = (args: Record<string, unknown>) => createHash('sha256').update(JSON.stringify(args)).digest('hex');

function minutes(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 1000)} s`;
}

/**
 * Calls that need a second person (`--approval-level`, `--approval-tools`)
 * wait here once their checks passed and their targets are known, before
 * anything is sent or audited as begun: a row in the store names the caller,
 * the exact targets and the arguments, and another identity approves or
 * denies it (fleetmesh approvals, the console's approvals page). The call
 * goes on when approved, and fails when denied (forbidden), when no one
 * decided in time (deadline_exceeded), or when its caller gave up (the
 * approval is then withdrawn).
 */
export class ApprovalGate {
  constructor(
    private readonly store: BrokerStore,
    private readonly rule: ApprovalRule,
  ) {}

  /** Resolves with who approved the call. */
  async wait(request: ApprovalRequest): Promise<string> {
    const { store, rule } = this;
    const id = `ap-${randomBytes(5).toString('hex')}`;
    const createdAt = Date.now();
    const expiresAt = createdAt + rule.ttlMs;
    await store.approvals.insert({
      id,
      callId: request.callId,
      identityId: request.identity.id,
      identity: request.identity.name,
      subject: request.identity.person?.subject ?? null,
      tool: request.tool,
      action: request.action.id,
      level: request.action.level,
      targets: request.targets,
      arguments: request.shownArguments,
      argumentsSha256: digestOf(request.args),
      createdAt,
      expiresAt,
    });
    request.onWaiting?.(
      `${request.tool} waits for another identity's approval ${id} (fleetmesh approvals approve ${id}, or the console's approvals page); it expires in ${minutes(rule.ttlMs)}`,
    );
    const approved = (by: string | null) => {
      request.onWaiting?.(undefined);
      return by ?? 'someone';
    };
    for (;;) {
      const row = await store.approvals.get(id);
      if (row?.state === 'approved') return approved(row.decidedBy);
      if (row?.state === 'denied') {
        throw new FleetError(
          'forbidden',
          `${request.tool} was denied by ${row.decidedBy ?? 'someone'}${row.reason ? `: ${row.reason}` : ''} (approval ${id}); nothing was changed`,
          {
            hint: 'Ask the one who denied it why, or call again with other arguments.',
            details: { approval: id, state: 'denied' },
          },
        );
      }
      if (Date.now() >= expiresAt) {
        await store.approvals.decide(id, 'expired', { by: null, at: Date.now(), reason: null });
        const settled = await store.approvals.get(id);
        if (settled?.state === 'approved') return approved(settled.decidedBy);
        throw new FleetError(
          'deadline_exceeded',
          `no one approved ${request.tool} within ${minutes(rule.ttlMs)}: approval ${id} expired; nothing was changed`,
          {
            hint: 'Call again when someone who may approve it is there (fleetmesh approvals list shows what waits).',
            details: { approval: id, state: 'expired' },
          },
        );
      }
      if (request.signal.aborted) {
        await store.approvals.decide(id, 'withdrawn', { by: null, at: Date.now(), reason: 'the caller cancelled the call' });
        throw new FleetError('cancelled', `${request.tool} was cancelled while it waited for approval ${id}; nothing was changed`, {
          details: { approval: id, state: 'withdrawn' },
        });
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(POLL_MS, Math.max(expiresAt - Date.now(), 0)));
        function done() {
          clearTimeout(timer);
          request.signal.removeEventListener('abort', done);
          resolve();
        }
        request.signal.addEventListener('abort', done, { once: true });
      });
    }
  }
}
