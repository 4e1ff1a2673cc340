import { describe, expect, it } from 'vitest';
import { listAgents } from '../../../shared/domains/fleet/fleet-actions.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { ClaimEvidence } from '../../agents/claims.ts';
import { GrantSet } from '../../auth/grants.ts';
import type { Identity } from '../../auth/identities.ts';
import type { BrokerActionContext } from '../../calls/broker-action.ts';
import { renderMarkdown } from '../../mcp/render/markdown.ts';
import { listAgentsHandler } from './list-agents.ts';

const identity: Identity = { id: 'i1', name: 'admin', level: 1, grants: new GrantSet(['host:*=read']), expiresAt: Number.MAX_SAFE_INTEGER };

function host(n: number): Host {
  const name = `web-${String(n).padStart(3, '0')}`;
  return {
    id: `id-${name}`,
    name,
    state: n % 10 === 0 ? 'offline' : 'online',
    version: '1.0.0',
    labels: { role: 'web' },
    roles: [],
    hello: { facts: {}, collectors: [] },
    lastSeenAt: 0,
    stateSince: 0,
    certNotAfter: null,
    sample: null,
  } as unknown as Host;
}

const fleet = Array.from({ length: 95 }, (_, n) => host(n));
const context = {
  identity,
  registry: { list: () => fleet },
  index: { roles: [], indexer: () => ({ guestEntries: () => [] }) } as unknown as ClaimEvidence,
  visibleHosts: () => fleet,
} as unknown as BrokerActionContext;

describe('list_agents', () => {
  it('answers a page of 40 agents by default, with the count of all and the offset of the next page', async () => {
    const first = await listAgentsHandler.run({}, context);
    expect(first).toMatchObject({ count: 95, next_offset: 40 });
    expect((first.agents as { name: string }[]).map((a) => a.name).slice(0, 2)).toEqual(['web-000', 'web-001']);
    expect(first.agents).toHaveLength(40);
    const text = renderMarkdown(listAgents, 'broker', first);
    expect(text).toContain('These are agents 1 to 40. Next page: call list_agents again with the same arguments and offset=40.');
    expect(text).not.toContain('next_offset');

    const last = await listAgentsHandler.run({ offset: 80 }, context);
    expect(last).toMatchObject({ count: 95 });
    expect(last.agents).toHaveLength(15);
    expect(last).not.toHaveProperty('next_offset');
    expect(renderMarkdown(listAgents, 'broker', last)).not.toContain('Next page');
  });

  it('pages what the filters match, and takes a limit', async () => {
    const offline = await listAgentsHandler.run({ state: 'offline', limit: 5 }, context);
    expect(offline).toMatchObject({ count: 10, next_offset: 5 });
    expect((offline.agents as { name: string }[]).map((a) => a.name)).toEqual(['web-000', 'web-010', 'web-020', 'web-030', 'web-040']);
    expect(await listAgentsHandler.run({ state: 'offline', offset: 10 }, context)).toEqual({ agents: [], count: 10 });
  });

  it('refuses a limit past 500', () => {
    expect(listAgents.input.safeParse({ limit: 501 }).success).toBe(false);
    expect(listAgents.input.safeParse({ limit: 500, offset: 0 }).success).toBe(true);
  });
});
