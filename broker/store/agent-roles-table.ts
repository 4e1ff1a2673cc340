import type { SqlEngine } from './sql-engine.ts';

/** A role that carries power over an object several agents share, by the name its domain declares (docs/claims.md). */
export type AgentRole = string;

/** Any object: the operator vouches for whatever shared object the agent manages (a join token's roles). */
export const ANY_SCOPE = '*';

export interface RoleGrant {
  role: AgentRole;
  /** The object, as its domain names it (a cluster's id or name), or `*`. */
  scope: string;
  grantedAt: number;
  /** `token:<id>` or `operator`. */
  grantedBy: string;
}

interface RawRoleGrant {
  agent_id: string;
  role: AgentRole;
  scope: string;
  granted_at: number;
  granted_by: string;
}

function grantOf(raw: RawRoleGrant): RoleGrant {
  return { role: raw.role, scope: raw.scope, grantedAt: raw.granted_at, grantedBy: raw.granted_by };
}

/** The roles the operator granted each agent; everything else an agent says of itself is a claim. */
export class AgentRolesTable {
  constructor(private readonly sql: SqlEngine) {}

  async grant(agentId: string, grant: RoleGrant): Promise<void> {
    await this.sql.run(
      `INSERT INTO agent_roles (agent_id, role, scope, granted_at, granted_by) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (agent_id, role, scope) DO UPDATE SET granted_at = excluded.granted_at, granted_by = excluded.granted_by`,
      [agentId, grant.role, grant.scope, grant.grantedAt, grant.grantedBy],
    );
  }

  /** Withdraws roles (one role, or all of them); returns how many grants went. */
  withdraw(agentId: string, role?: AgentRole): Promise<number> {
    return role
      ? this.sql.run('DELETE FROM agent_roles WHERE agent_id = ? AND role = ?', [agentId, role])
      : this.sql.run('DELETE FROM agent_roles WHERE agent_id = ?', [agentId]);
  }

  /** One agent's grants (the primary key's first column finds them without reading the others'). */
  async of(agentId: string): Promise<RoleGrant[]> {
    const rows = await this.sql.all<RawRoleGrant>('SELECT * FROM agent_roles WHERE agent_id = ? ORDER BY granted_at, role, scope', [agentId]);
    return rows.map(grantOf);
  }

  /** Every agent's grants, by agent id. */
  async all(): Promise<Map<string, RoleGrant[]>> {
    const byAgent = new Map<string, RoleGrant[]>();
    for (const raw of await this.sql.all<RawRoleGrant>('SELECT * FROM agent_roles ORDER BY granted_at, role, scope')) {
      const grants = byAgent.get(raw.agent_id) ?? [];
      grants.push(grantOf(raw));
      byAgent.set(raw.agent_id, grants);
    }
    return byAgent;
  }
}
