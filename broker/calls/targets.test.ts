import { describe, expect, it } from 'vitest';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import type { FleetError } from '../../shared/errors/fleet-error.ts';
import type { Host } from '../agents/agent-registry.ts';
import { GrantSet } from '../auth/grants.ts';
import type { Identity } from '../auth/identities.ts';
import { resolveTargets } from './targets.ts';

const identity: Identity = { id: 'i1', name: 'admin', level: 1, grants: new GrantSet(['host:*=write']), expiresAt: Number.MAX_SAFE_INTEGER };
const unlabelled = [{ name: 'vm', id: 'a1', labels: {} } as unknown as Host];

function hintFor(options: { maySetLabels?: boolean }): string | undefined {
  try {
    resolveTargets(unlabelled, identity, agentInfo, { selector: 'role=web' }, options);
  } catch (error) {
    return (error as FleetError).hint;
  }
  throw new Error('the selector matched');
}

describe('a selector no agent matches', () => {
  it('tells a caller below set_agent_labels how to label agents at start only', () => {
    const hint = hintFor({ maySetLabels: false });
    expect(hint).toMatch(/--labels role=web \(fleetmesh agent, or fleetmesh up/);
    expect(hint).not.toMatch(/set_agent_labels/);
  });

  it('offers set_agent_labels to a caller who may call it', () => {
    expect(hintFor({ maySetLabels: true })).toMatch(/set_agent_labels changes them/);
  });
});
