import type { Level } from '../../shared/catalog/action.ts';
import { FleetError } from '../../shared/errors/fleet-error.ts';
import { createIdentity, DEFAULT_IDENTITY_TTL_MS } from '../auth/identities.ts';
import type { ToolGlobs } from '../auth/tool-filter.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import type { IdentityRow } from '../store/identities-table.ts';
import { type AdminActor, auditAdminChange } from './admin-audit.ts';

export interface IdentityRequest {
  name: string;
  level: Level;
  grants: string[];
  tools?: ToolGlobs;
  ttlMs?: number;
}

/**
 * Creates an MCP client identity for `actor` (`fleetmesh identity create`, the
 * console's identities) and audits it: name, level, grants and expiry, never
 * the bearer token, which only this answer holds.
 */
export async function createIdentityAs(store: BrokerStore, actor: AdminActor, request: IdentityRequest): Promise<{ token: string; row: IdentityRow }> {
  const created = await createIdentity(store, {
    name: request.name,
    level: request.level,
    grants: request.grants,
    ...(request.tools ? { tools: request.tools } : {}),
    ttlMs: request.ttlMs ?? DEFAULT_IDENTITY_TTL_MS,
  });
  const row = (await store.identities.get(created.id)) as IdentityRow;
  await auditAdminChange(store, actor, {
    tool: 'identity create',
    target: `identity:${row.name}`,
    arguments: { name: row.name, id: row.id, level: row.level, grants: row.grants, expires_at_unix_ms: row.expiresAt },
  });
  return { token: created.token, row };
}

/** Revokes an identity by name or id for `actor`, and audits it: its token stops working at its next request. */
export async function revokeIdentityAs(store: BrokerStore, actor: AdminActor, nameOrId: string): Promise<IdentityRow> {
  const row = (await store.identities.findLiveByName(nameOrId)) ?? (await store.identities.get(nameOrId));
  if (!row || row.revokedAt !== null || !(await store.identities.revoke(row.id, Date.now()))) {
    throw new FleetError('not_found', `no identity is called "${nameOrId}"`, { hint: 'fleetmesh identity list shows them.' });
  }
  await auditAdminChange(store, actor, { tool: 'identity revoke', target: `identity:${row.name}`, arguments: { name: row.name, id: row.id } });
  return row;
}
