import { randomUUID } from 'node:crypto';
import type { AuditPeople } from '../store/audit-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';

/** Who changes the broker's own records: an identity at the console, or the operator at the broker's shell (who holds its data dir). */
export interface AdminActor {
  name: string;
  people?: AuditPeople;
}

/** What one change of the broker's records puts in the audit: its command's words, and what it acted on (never a secret). */
export interface AdminChange {
  /** The CLI command's words, `token create`: the console and the shell write the same. */
  tool: string;
  target: string;
  arguments: Record<string, unknown>;
}

/**
 * Records a change of the broker's own records (join tokens, identities) as
 * one completed audit row of level 3, whoever made it: the console and the CLI
 * write the same row for the same change, so the audit reads alike for both.
 * The row is committed after the change, which has no effect until the store
 * holds it and cannot fail half-way on a host.
 */
export async function auditAdminChange(store: BrokerStore, actor: AdminActor, change: AdminChange, nowMs = Date.now()): Promise<void> {
  const callId = randomUUID();
  await store.audit.begin({
    callId,
    startedAt: nowMs,
    identity: actor.name,
    tool: change.tool,
    action: `admin.${change.tool.replace(' ', '_')}`,
    level: 3,
    targets: [change.target],
    arguments: change.arguments,
    outcome: 'pending',
    errorCode: null,
    ...actor.people,
  });
  await store.audit.complete(callId, { outcome: 'ok', errorCode: null, finishedAt: nowMs });
}
