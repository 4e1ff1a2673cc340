import type { EventEmitter } from 'node:events';
import type { AgentRegistry, Host } from '../agents/agent-registry.ts';
import type { FleetIndex } from '../index/fleet-index.ts';
import type { McpSession } from './mcp-session.ts';
import type { McpTasks, TaskWire } from './tasks/mcp-tasks.ts';

/** Where changes come from. */
interface ChangeSources {
  registry: AgentRegistry;
  index: FleetIndex;
  tasks: McpTasks;
  /** In a cluster, the statuses of tasks other brokers run. */
  remoteTasks?: Pick<EventEmitter<{ taskStatus: [identityId: string, task: TaskWire] }>, 'on' | 'off'>;
}

/** What of a host decides what the fleet serves (fleet-served.ts): its name, which grants reach, and its collectors. */
function servingOf(host: Host): string {
  return JSON.stringify([host.name, (host.hello?.collectors ?? []).map((collector) => [collector.name, collector.available, collector.absent === true])]);
}

/**
 * What of a host decides what it serves, and what the resource lists read
 * of it: that and its facts (a cluster a manager joined, say). A host that only
 * went and came back, as a whole fleet does after its broker was held,
 * serves and lists the same things.
 */
function seenOf(host: Host): { served: string; listed: string } {
  const served = servingOf(host);
  return { served, listed: `${served}\u0000${JSON.stringify(host.hello?.facts ?? null)}` };
}

/**
 * Tells the MCP sessions open now (`sessions()`, asked at each change) what
 * changed: each hears of the fleet what its identity may see and re-reads what
 * it subscribed to (resources/resource-watch.ts), and a task's status goes to
 * the sessions of the identity it belongs to, and to no other. Returns what
 * stops the telling.
 */
export function tellSessions(sources: ChangeSources, sessions: () => Iterable<McpSession>): () => void {
  const { registry, index, tasks, remoteTasks } = sources;
  // What each host last said of what it serves and lists: most state changes (a fleet reconnecting) change neither.
  const seen = new Map(registry.list().map((host) => [host.id, seenOf(host)]));
  const onState = (host: Host) => {
    const now = seenOf(host);
    const before = seen.get(host.id);
    seen.set(host.id, now);
    const change = { served: before?.served !== now.served, listed: before?.listed !== now.listed };
    for (const session of sessions()) session.fleetChanged('host', host.name, change);
  };
  const onRevoked = (host: Host) => {
    seen.delete(host.id);
    for (const session of sessions()) session.fleetChanged('host', host.name, { served: true });
  };
  const onIndex = (what: string, key: string, listed: boolean) => {
    for (const session of sessions()) session.fleetChanged(what, key, { listed });
  };
  const onTask = (identityId: string, task: TaskWire) => {
    for (const session of sessions()) if (session.identity.id === identityId) session.taskStatus(task);
  };
  registry.on('state', onState);
  registry.on('revoked', onRevoked);
  index.on('changed', onIndex);
  tasks.on('status', onTask);
  remoteTasks?.on('taskStatus', onTask);
  return () => {
    remoteTasks?.off('taskStatus', onTask);
    registry.off('state', onState);
    registry.off('revoked', onRevoked);
    index.off('changed', onIndex);
    tasks.off('status', onTask);
  };
}
