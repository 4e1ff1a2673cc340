import { FleetError } from '../../shared/errors/fleet-error.ts';
import { statedClaims } from '../agents/claims.ts';
import { AGENT_ROLE_NAMES, AGENT_ROLES } from '../domains/broker-domains.ts';
import type { AgentRole, RoleGrant } from '../store/agent-roles-table.ts';
import type { BrokerStore } from '../store/broker-store.ts';
import { findAgent } from './revoke-agent.ts';

interface ApproveRequest {
  /** Agent name or id. */
  agent: string;
  /** Only this role; default: every role the agent claims. */
  role?: string;
  /** The shared object the role covers (its id or name); default: the one the agent claims. */
  scope?: string;
}

function parseRole(text: string): AgentRole {
  if (AGENT_ROLE_NAMES.includes(text)) return text;
  throw new FleetError('invalid_argument', `"${text}" is not a role`, { hint: `Roles: ${AGENT_ROLE_NAMES.join(', ')}.` });
}

/**
 * The operator approves what an agent claims over a shared object (docs/claims.md):
 * by default each claim of its last Hello, bound to the object it named, so
 * a later claim of another object needs approving again. A running
 * broker picks the change up from the store within a poll.
 */
export async function approveAgent(store: BrokerStore, request: ApproveRequest, now = Date.now()): Promise<{ name: string; grants: RoleGrant[] }> {
  const agent = await findAgent(store, request.agent);
  const role = request.role === undefined ? undefined : parseRole(request.role);
  const claims = statedClaims(agent.hello?.facts ?? {}, AGENT_ROLES).filter((claim) => role === undefined || claim.role === role);
  if (request.scope !== undefined && role === undefined && claims.length !== 1) {
    throw new FleetError('invalid_argument', `say which role --scope ${request.scope} is for`, { hint: `Add --role, one of ${AGENT_ROLE_NAMES.join(', ')}.` });
  }
  const grants: RoleGrant[] =
    request.scope !== undefined
      ? [{ role: (role ?? claims[0]?.role) as AgentRole, scope: request.scope, grantedAt: now, grantedBy: 'operator' }]
      : claims.map((claim) => ({ role: claim.role, scope: claim.object, grantedAt: now, grantedBy: 'operator' }));
  if (grants.length === 0) {
    throw new FleetError('not_found', `agent ${agent.name} claims no ${role ?? 'role'} over a shared object`, {
      hint: 'Approve once it has connected and claimed one (fleetmesh agents lists claims), or name the object with --role and --scope.',
    });
  }
  await store.transaction(async () => {
    for (const grant of grants) await store.roles.grant(agent.id, grant);
  });
  return { name: agent.name, grants };
}

/** Withdraws an agent's roles (one, or all): what it reported as their holder leaves the index. */
export async function withdrawAgentRoles(store: BrokerStore, agentName: string, role?: string): Promise<{ name: string; withdrawn: number }> {
  const agent = await findAgent(store, agentName);
  return { name: agent.name, withdrawn: await store.roles.withdraw(agent.id, role === undefined ? undefined : parseRole(role)) };
}
