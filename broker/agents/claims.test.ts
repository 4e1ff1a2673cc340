import { describe, expect, it } from 'vitest';
import type { GuestInventory } from '../../shared/domains/proxmox/guest-inventory.ts';
import { pveMemberRole } from '../domains/proxmox/proxmox-roles.ts';
import { swarmManagerRole } from '../domains/swarm/swarm-roles.ts';
import type { RoleGrant } from '../store/agent-roles-table.ts';
import type { Host } from './agent-registry.ts';
import { assessClaims, type ClaimEvidence, holdsRole } from './claims.ts';

function host(id: string, facts: Record<string, string>, roles: RoleGrant[] = []): Host {
  return { id, name: id, roles, hello: { facts } } as unknown as Host;
}

const manager = (nodeId: string) => ({ swarm_role: 'manager', swarm_id: 'swarm-1', swarm_node_id: nodeId });
const operator = (scope: string): RoleGrant => ({ role: 'swarm-manager', scope, grantedAt: 0, grantedBy: 'operator' });

/** What the index would hold: these guest reports, and the roles the swarm and proxmox domains declare. */
function evidence(guests: { inventory: GuestInventory; hostId: string }[] = []): ClaimEvidence {
  return { roles: [swarmManagerRole, pveMemberRole], indexer: (() => ({ guestEntries: () => guests })) as unknown as ClaimEvidence['indexer'] };
}

describe('claims over shared objects', () => {
  it('leaves a manager claim pending until the operator approves it: a node id proves nothing', () => {
    const claimant = host('a', manager('n1'));
    expect(assessClaims([claimant], evidence()).get('a')).toEqual([{ role: 'swarm-manager', object: 'swarm-1', node: 'n1', status: 'pending' }]);
    expect(holdsRole(claimant, 'swarm-manager', 'swarm-1', [claimant], evidence())).toBe(false);
    // A trusted manager's snapshot is no evidence of which agent runs on a node it lists (test/rogue-agents.test.ts sends one).
    const approved = host('a', manager('n1'), [operator('*')]);
    expect(holdsRole(approved, 'swarm-manager', 'swarm-1', [approved], evidence())).toBe(true);
  });

  it('binds an approval to the swarm it names', () => {
    const elsewhere = host('a', manager('n1'), [operator('swarm-2')]);
    expect(holdsRole(elsewhere, 'swarm-manager', 'swarm-1', [elsewhere], evidence())).toBe(false);
  });

  it('proves neither of two agents that claim the same node, and keeps the approved one', () => {
    const real = host('real', manager('n1'), [operator('swarm-1')]);
    const copy = host('copy', manager('n1'));
    const claims = assessClaims([real, copy], evidence());
    expect(claims.get('real')?.[0]?.status).toBe('approved');
    expect(claims.get('copy')?.[0]?.status).toBe('pending');
  });

  it('proves a PVE member by another member guest report on its node, never by its own', () => {
    const member = host('pve-b', { proxmox_cluster: 'lab', proxmox_node: 'pve2' });
    const report = (hostId: string) => ({
      hostId,
      inventory: { cluster: 'lab', node: 'pve1', taken_unix_ms: 0, guests: [{ node: 'pve2' }] } as GuestInventory,
    });
    expect(holdsRole(member, 'pve-member', 'lab', [member], evidence([report('pve-b')]))).toBe(false);
    expect(holdsRole(member, 'pve-member', 'lab', [member], evidence([report('pve-a')]))).toBe(true);
  });

  it('claims nothing for a worker or a host outside any cluster', () => {
    expect(assessClaims([host('w', { swarm_role: 'worker', swarm_id: 'swarm-1' })], evidence()).get('w')).toEqual([]);
  });
});
