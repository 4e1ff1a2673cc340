import { randomUUID } from 'node:crypto';
import type { Action } from '../../shared/catalog/action.ts';
import { type ErrorInfo, FleetError } from '../../shared/errors/fleet-error.ts';
import type { Logger } from '../../shared/log/logger.ts';
import type { AgentRegistry } from '../agents/agent-registry.ts';
import type { AuditOutcome, AuditPeople } from '../store/audit-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { redactArguments } from './redact.ts';
import type { RefusalAudit } from './refusal-audit.ts';

/** Completes an audit row again with what an agent answered after the call gave up on it. */
export type LateAudit = (outcome: AuditOutcome, errorCode: string | null, note: string) => void;

interface CallAuditOptions {
  store: BrokerStore;
  registry: AgentRegistry;
  refusals: RefusalAudit;
  log: Logger;
  identity: string;
  /** The person and client behind the identity, when OAuth proved it. */
  people: AuditPeople;
  tool: string;
  action: Action;
  args: Record<string, unknown>;
}

/**
 * The audit of one call: changes (level ≥ 1) get a row before anything is
 * sent, completed once the call ends, and completed again by answers that
 * come after it gave up; refusals go to the rate-bounded refusal audit.
 */
export class CallAudit {
  private readonly callId = randomUUID();
  private readonly audited: boolean;
  private readonly arguments_: Record<string, unknown>;
  /** A pending row exists: the call got past its checks. */
  begun = false;
  /** Who approved the call, once a second person did (written with the row). */
  approvedBy: string | undefined;

  constructor(private readonly options: CallAuditOptions) {
    this.audited = options.action.level >= 1;
    this.arguments_ = redactArguments(options.args, options.action.sensitive);
  }

  /** Records that the call is about to go out to these targets. Resolves once the row is committed: nothing goes out before (a store that does not answer refuses the call). */
  readonly begin = async (targets: string[]): Promise<void> => {
    if (!this.audited) return;
    await this.writeBegin(targets).catch((error: unknown) => {
      if (error instanceof FleetError && error.code === 'unavailable') throw error;
      // No row, no change: a change the audit cannot record is not made (reads, which write nothing, go on).
      throw new FleetError('internal', `the audit log cannot be written, so the change was not made: ${(error as Error).message}`, {
        hint: "Free space on the broker's data dir (or fix its store); reads still work, and changes go through again once the audit can be written.",
        cause: error,
      });
    });
    this.begun = true;
  };

  private async writeBegin(targets: string[]): Promise<void> {
    const { options } = this;
    await options.store.audit.begin({
      callId: this.callId,
      startedAt: Date.now(),
      identity: options.identity,
      tool: options.tool,
      action: options.action.id,
      level: options.action.level,
      targets,
      targetIds: targets.flatMap((name) => options.registry.find(name)?.id ?? []),
      arguments: this.arguments_,
      outcome: 'pending',
      errorCode: null,
      ...options.people,
      ...(this.approvedBy ? { approvedBy: this.approvedBy } : {}),
    });
  }

  /** `note`: what the row's outcome alone does not say (what the hosts answered they did). */
  async complete(outcome: AuditOutcome, errorCode: string | null, note?: string): Promise<void> {
    if (!this.begun) return;
    await this.options.store.audit.complete(this.callId, { outcome, errorCode, finishedAt: Date.now(), ...(note ? { note } : {}) }).catch(this.lost);
  }

  /** The call happened; a row the store did not take stays pending, and the next start (in a cluster: another broker) marks it interrupted. */
  private readonly lost = (error: unknown): void => {
    this.options.log.warn('could not complete an audit row', { call_id: this.callId, error: (error as Error).message });
  };

  /** The call's id: its audit row's, and its approval's when it waits for one. */
  get id(): string {
    return this.callId;
  }

  /** The row's id, for a broker holding an agent of the call to note a late answer there; undefined for calls without a row. */
  get auditId(): string | undefined {
    return this.audited ? this.callId : undefined;
  }

  /** Where answers past the call's end are audited; undefined for calls without a row. */
  get late(): LateAudit | undefined {
    if (!this.audited) return undefined;
    return (outcome, errorCode, note) => {
      if (!this.begun) return;
      void this.options.store.audit.complete(this.callId, { outcome, errorCode, finishedAt: Date.now(), note }).catch(this.lost);
    };
  }

  /** A call refused before it went out: changes, and any grant refusal, reach the refusal audit. */
  async refused(failure: FleetError): Promise<void> {
    const { options } = this;
    if (!this.audited && failure.code !== 'forbidden') return;
    await options.refusals.record({
      identity: options.identity,
      people: { ...options.people, ...(this.approvedBy ? { approvedBy: this.approvedBy } : {}) },
      tool: options.tool,
      action: options.action.id,
      level: options.action.level,
      arguments: this.arguments_,
      errorCode: failure.code,
      reason: failure.message.slice(0, 500),
    });
  }

  /**
   * Refusals the hosts made themselves, after the broker's checks let the call
   * through: each reaches the refusal audit with the call's arguments (the path
   * or command asked for) and the host's reason, whatever the action's level.
   */
  async refusedOnHosts(refusals: readonly ErrorInfo[]): Promise<void> {
    const { options } = this;
    for (const refusal of refusals) {
      const host = refusal.host ?? '';
      const id = options.registry.find(host)?.id;
      await options.refusals.record({
        identity: options.identity,
        tool: options.tool,
        action: options.action.id,
        level: options.action.level,
        targets: [host],
        targetIds: id ? [id] : [],
        arguments: this.arguments_,
        errorCode: refusal.code,
        reason: `${host} refused: ${refusal.message}`.slice(0, 500),
      });
    }
  }
}

/**
 * The audit's note of an answer that came after its call ended: past the
 * deadline, or (`cancelled`) after the client cancelled the call, whatever
 * time was left before the deadline.
 */
export function lateNote(host: string, errorCode: string | undefined, durationMs: number, timeoutMs: number, cancelled = false): string {
  const answered = `${host} answered ${errorCode ?? 'ok'} after ${Math.round(durationMs)} ms`;
  if (cancelled && durationMs < timeoutMs) return `${answered}, after its client had cancelled the call (its deadline was ${timeoutMs} ms)`;
  return `${answered}, past the call's ${timeoutMs} ms deadline`;
}

/** How a completed call is audited: an error, some hosts failing, or all well. */
export function auditOutcomeOf(result: { isError: boolean; structured: Record<string, unknown> }): 'ok' | 'partial' | 'error' {
  if (result.isError) return 'error';
  return result.structured.errors && (result.structured.errors as unknown[]).length ? 'partial' : 'ok';
}

export function firstErrorCode(result: { structured: Record<string, unknown> }): string | null {
  const errors = (result.structured.errors ?? []) as ErrorInfo[];
  return errors[0]?.code ?? null;
}
