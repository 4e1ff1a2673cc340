import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import type { McpSession } from './mcp-session.ts';
import type { McpTasks } from './tasks/mcp-tasks.ts';
import { tellSessions } from './tell-sessions.ts';

function hostNamed(name: string, collectors: { name: string; available: boolean; absent?: boolean }[]): Host {
  return {
    id: `id-${name}`,
    name,
    labels: {},
    operatorLabels: {},
    roles: [],
    state: 'online',
    session: undefined,
    hello: {
      agent_version: '0.1.0',
      protocol_version: 1,
      actions: [],
      collectors: collectors.map((collector) => ({ reason: '', ...collector })),
      facts: {},
      started_unix_ms: 0,
    },
    version: '0.1.0',
    enrolledAt: 0,
    lastSeenAt: null,
    lastHeartbeatAt: null,
    sample: null,
    containerSamples: [],
    containerSamplesAt: null,
    certNotAfter: null,
    stateSince: 0,
  };
}

/** A registry that holds `hosts` and emits what a test says, and sessions that note each change they are told of. */
function fleetOf(hosts: Host[]) {
  const registry = Object.assign(new EventEmitter(), { list: () => hosts });
  const told: { key: string; servedMayChange: boolean | undefined; listed?: boolean }[] = [];
  const session = {
    fleetChanged: (_what: string, key: string, change?: { served?: boolean; listed?: boolean }) =>
      told.push({ key, servedMayChange: change?.served, listed: change?.listed }),
  };
  const stop = tellSessions(
    { registry: registry as unknown as AgentRegistry, index: new EventEmitter() as unknown as FleetIndex, tasks: new EventEmitter() as unknown as McpTasks },
    () => [session as unknown as McpSession],
  );
  return { registry, told, stop };
}

describe('telling MCP sessions of hosts', () => {
  it('says what the fleet serves cannot have changed when a host only changes state, as a reconnecting fleet does thousands of times', () => {
    const web = hostNamed('web-1', [{ name: 'system', available: true }]);
    const { registry, told, stop } = fleetOf([web]);
    web.state = 'offline';
    registry.emit('state', web, 'online');
    web.state = 'online';
    // A new stream brings a new hello, with the same collectors.
    web.hello = { ...(web.hello as NonNullable<Host['hello']>), started_unix_ms: 5, collectors: [{ name: 'system', available: true, reason: '' }] };
    registry.emit('state', web, 'offline');
    expect(told).toEqual([
      { key: 'web-1', servedMayChange: false, listed: false },
      { key: 'web-1', servedMayChange: false, listed: false },
    ]);
    // Back with other facts (a new kernel): what lists read changed, what it serves did not.
    web.hello = { ...web.hello, facts: { ...web.hello.facts, kernel: '6.12.0' } };
    registry.emit('state', web, 'offline');
    expect(told.at(-1)).toEqual({ key: 'web-1', servedMayChange: false, listed: true });
    stop();
  });

  it('says it may have changed when a host comes, goes, is renamed, or its collectors change', () => {
    const web = hostNamed('web-1', [{ name: 'system', available: true }]);
    const { registry, told, stop } = fleetOf([web]);
    web.hello = { ...(web.hello as NonNullable<Host['hello']>), collectors: [{ name: 'docker', available: true, reason: '' }] };
    registry.emit('state', web, 'online');
    web.hello = { ...web.hello, collectors: [{ name: 'docker', available: false, reason: 'no socket', absent: true }] };
    registry.emit('state', web, 'online');
    web.name = 'web-2';
    registry.emit('state', web, 'online');
    const newcomer = hostNamed('db-1', [{ name: 'system', available: true }]);
    registry.emit('state', newcomer, 'offline');
    registry.emit('revoked', newcomer);
    expect(told.map((change) => change.servedMayChange)).toEqual([true, true, true, true, true]);
    // Once stopped, nothing more is told.
    stop();
    registry.emit('state', web, 'online');
    expect(told).toHaveLength(5);
  });
});
