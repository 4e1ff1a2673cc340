import { describe, expect, it } from 'vitest';
import { agentInfo } from '../../shared/domains/agent/agent-actions.ts';
import { dockerList, dockerRestart } from '../../shared/domains/docker/docker-actions.ts';
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

function host(name: string, labels: Record<string, string>, operatorLabels: Record<string, string> = {}, collectors: string[] = ['docker']): Host {
  return {
    id: `id-${name}`,
    name,
    labels,
    operatorLabels,
    hello: { collectors: collectors.map((c) => ({ name: c, available: true, reason: '' })) },
  } as unknown as Host;
}

const fleet = [host('web-1', { role: 'web' }, { role: 'web' }), host('web-2', { role: 'web' }, {}, []), host('db-1', { role: 'db' }, { role: 'db' })];
const names = (resolved: { hosts: Host[] }) => resolved.hosts.map((h) => h.name);

function refusal(run: () => unknown): FleetError {
  try {
    run();
  } catch (error) {
    return error as FleetError;
  }
  throw new Error('expected a refusal');
}

describe('resolveTargets', () => {
  it('finds one host by name (any case) or id, as a single node', () => {
    expect(resolveTargets(fleet, identity, agentInfo, { host: 'WEB-1' })).toEqual({ hosts: [fleet[0]], single: true });
    expect(resolveTargets(fleet, identity, agentInfo, { server: 'id-db-1' })).toEqual({ hosts: [fleet[2]], single: true });
  });

  it('answers an unknown host with the closest names', () => {
    const failure = refusal(() => resolveTargets(fleet, identity, agentInfo, { hosts: ['web-1', 'db-2'] }));
    expect(failure.code).toBe('not_found');
    expect(failure.message).toBe('no agent is called "db-2"');
    expect((failure.details as { closest: string[] }).closest[0]).toBe('db-1');
  });

  it('refuses two kinds of target at once', () => {
    expect(refusal(() => resolveTargets(fleet, identity, agentInfo, { host: 'web-1', selector: 'role=web' })).code).toBe('invalid_argument');
  });

  it('without targets, reads every host with the collector and refuses a change', () => {
    expect(names(resolveTargets(fleet, identity, dockerList, {}))).toEqual(['web-1', 'db-1']);
    expect(refusal(() => resolveTargets(fleet, identity, dockerRestart, {})).code).toBe('invalid_argument');
  });

  it('without targets, leaves out the hosts where the collector is absent and names them once, apart', () => {
    const noEngine = {
      ...host('edge-1', {}),
      hello: { collectors: [{ name: 'docker', available: false, absent: true, reason: 'no Docker engine on this host' }] },
    } as unknown as Host;
    const broken = { ...host('edge-2', {}), hello: { collectors: [{ name: 'docker', available: false, reason: 'permission denied' }] } } as unknown as Host;
    const resolved = resolveTargets([...fleet, noEngine, broken], identity, dockerList, {});
    // A failed collector is still asked (its failure is news); an absent one is not.
    expect(names(resolved)).toEqual(['web-1', 'db-1', 'edge-2']);
    expect(resolved.absent).toEqual([{ collector: 'docker', hosts: ['edge-1'] }]);
    expect(names(resolveTargets([...fleet, noEngine], identity, dockerList, { host: 'edge-1' }))).toEqual(['edge-1']);
  });

  it("matches a change's selector against operator labels only, unless told otherwise", () => {
    expect(names(resolveTargets(fleet, identity, dockerList, { selector: 'role=web' }))).toEqual(['web-1', 'web-2']);
    expect(names(resolveTargets(fleet, identity, dockerRestart, { selector: 'role=web' }))).toEqual(['web-1']);
    expect(names(resolveTargets(fleet, identity, dockerRestart, { selector: 'role=web' }, { mutationsMatchAgentLabels: true }))).toEqual(['web-1', 'web-2']);
  });

  it('treats hosts outside the grants as if they did not exist', () => {
    const webOnly: Identity = { ...identity, grants: new GrantSet(['host:web-*']) };
    expect(names(resolveTargets(fleet, webOnly, agentInfo, {}))).toEqual(['web-1', 'web-2']);
    expect(refusal(() => resolveTargets(fleet, webOnly, agentInfo, { host: 'db-1' })).code).toBe('not_found');
  });
});
