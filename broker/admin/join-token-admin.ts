import { FleetError } from '../../shared/errors/fleet-error.ts';
import { createJoinToken, type JoinTokenOptions } from '../enrollment/join-tokens.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { type AdminActor, auditAdminChange } from './admin-audit.ts';

/**
 * Creates a join token for `actor` (`fleetmesh token create`, the console's
 * join tokens) and audits it: the id, uses, expiry, labels and roles, never the
 * token, which only this answer holds.
 */
export async function createJoinTokenAs(store: BrokerStore, actor: AdminActor, options: JoinTokenOptions) {
  const created = await createJoinToken(store, options);
  await auditAdminChange(store, actor, {
    tool: 'token create',
    target: `join-token:${created.id}`,
    arguments: {
      token_id: created.id,
      uses_allowed: created.usesAllowed,
      expires_at_unix_ms: created.expiresAt,
      labels: created.labels,
      roles: created.roles,
    },
  });
  return created;
}

/** Revokes a join token by its id (or the whole token, whose second part is the id) for `actor`, and audits it; enrolled agents stay. */
export async function revokeJoinTokenAs(store: BrokerStore, actor: AdminActor, idOrToken: string): Promise<string> {
  const id = idOrToken.includes('.') ? (idOrToken.split('.')[1] ?? idOrToken) : idOrToken;
  if (!(await store.tokens.revoke(id, Date.now()))) {
    throw new FleetError('not_found', `no usable join token has the id "${idOrToken}"`, { hint: 'fleetmesh token list shows the token ids.' });
  }
  await auditAdminChange(store, actor, { tool: 'token revoke', target: `join-token:${id}`, arguments: { token_id: id } });
  return id;
}
