import type { z } from 'zod';
import type { attentionShape, notableChangeShape, suggestedActionShape } from '../../../shared/domains/checkup/report-action.ts';
import type { HostSnapshot, SnapshotContainer, SnapshotSection } from './host-snapshot.ts';

type NotableChange = z.infer<typeof notableChangeShape>;
type Attention = z.infer<typeof attentionShape>;
type SuggestedAction = z.infer<typeof suggestedActionShape>;

/** A disk whose usage moved by at least this many points since the previous report is a notable change. */
const DISK_CHANGE_POINTS = 5;
const DISK_WARNING_PERCENT = 80;
const DISK_CRITICAL_PERCENT = 90;
const BUSY_PERCENT = 90;

const SECTIONS: { section: SnapshotSection; of(snapshot: HostSnapshot): unknown }[] = [
  { section: 'docker', of: (s) => s.containers },
  { section: 'ports', of: (s) => s.listening },
  { section: 'processes', of: (s) => s.zombies },
  { section: 'disks', of: (s) => s.disks },
];

function change(kind: NotableChange['kind'], subject: string, before: string | null, after: string | null): NotableChange {
  return { kind, subject, before, after };
}

function containerChanges(before: SnapshotContainer[], after: SnapshotContainer[]): NotableChange[] {
  const changes: NotableChange[] = [];
  const previous = new Map(before.map((c) => [c.name, c]));
  const current = new Map(after.map((c) => [c.name, c]));
  for (const [name, old] of previous) if (!current.has(name)) changes.push(change('container_gone', name, old.state, null));
  for (const [name, now] of current) {
    const old = previous.get(name);
    if (!old) {
      changes.push(change('container_new', name, null, now.state));
      continue;
    }
    if (old.id !== now.id) changes.push(change('container_replaced', name, old.id.slice(0, 12), now.id.slice(0, 12)));
    if (old.image !== now.image) changes.push(change('image_changed', name, old.image, now.image));
    if (old.state !== now.state) changes.push(change('state_changed', name, old.state, now.state));
    if (old.ports.join(',') !== now.ports.join(',')) changes.push(change('ports_changed', name, old.ports.join(', '), now.ports.join(', ')));
  }
  return changes;
}

function diskChanges(before: NonNullable<HostSnapshot['disks']>, after: NonNullable<HostSnapshot['disks']>): NotableChange[] {
  const changes: NotableChange[] = [];
  const previous = new Map(before.map((d) => [d.mount, d.usage_percent]));
  const current = new Map(after.map((d) => [d.mount, d.usage_percent]));
  const percent = (value: number) => `${Math.round(value * 10) / 10} %`;
  for (const [mount, usage] of previous) if (!current.has(mount)) changes.push(change('disk_gone', mount, percent(usage), null));
  for (const [mount, usage] of current) {
    const old = previous.get(mount);
    if (old === undefined) changes.push(change('disk_new', mount, null, percent(usage)));
    else if (Math.abs(usage - old) >= DISK_CHANGE_POINTS) changes.push(change('disk_usage_changed', mount, percent(old), percent(usage)));
  }
  return changes;
}

/**
 * What changed between two snapshots of a host. A section that either
 * snapshot lacks (its collector did not answer) is `section_skipped`: its
 * contents are not compared, so a Docker engine that did not answer never reads
 * as every container gone.
 */
export function compareSnapshots(before: HostSnapshot | undefined, after: HostSnapshot): NotableChange[] {
  const collected = (snapshot: HostSnapshot | undefined, of: (s: HostSnapshot) => unknown) =>
    snapshot === undefined ? null : of(snapshot) === null ? 'not collected' : 'collected';
  const changes = SECTIONS.filter(({ of }) => of(after) === null || (before !== undefined && of(before) === null)).map(({ section, of }) =>
    change('section_skipped', section, collected(before, of), collected(after, of)),
  );
  if (!before) return changes;
  if (before.containers && after.containers) changes.push(...containerChanges(before.containers, after.containers));
  if (before.listening && after.listening) {
    const opened = after.listening.filter((socket) => !before.listening?.includes(socket));
    const closed = before.listening.filter((socket) => !after.listening?.includes(socket));
    if (opened.length || closed.length) changes.push(change('ports_changed', 'host', closed.join(', ') || null, opened.join(', ') || null));
  }
  if (before.disks && after.disks) changes.push(...diskChanges(before.disks, after.disks));
  return changes;
}

/** Whether anything changed: a section that was not collected then and is not now is the same as before. */
export function anythingChanged(changes: NotableChange[]): boolean {
  return changes.some((c) => c.kind !== 'section_skipped' || (c.before !== null && c.before !== c.after));
}

/**
 * What on the host needs a look now, worst first. A container that restarted
 * since the `previous` report is restarting even when this one finds it in one
 * of its short runs between two crashes (state running).
 */
export function needsAttention(snapshot: HostSnapshot, previous?: HostSnapshot): Attention[] {
  const found: Attention[] = [];
  const restartsBefore = new Map((previous?.containers ?? []).map((c) => [c.id, c.restart_count]));
  for (const c of snapshot.containers ?? []) {
    const restartedSince = c.restart_count > (restartsBefore.get(c.id) ?? c.restart_count);
    if (c.state === 'restarting' || restartedSince) found.push({ kind: 'container_restarting', subject: c.name, severity: 'critical', value: c.restart_count });
    else if (c.health === 'unhealthy') found.push({ kind: 'container_unhealthy', subject: c.name, severity: 'critical', value: null });
    else if (c.state === 'dead' || c.state === 'exited')
      found.push({ kind: 'container_down', subject: c.name, severity: c.state === 'dead' ? 'critical' : 'warning', value: null });
  }
  for (const d of snapshot.disks ?? []) {
    if (d.usage_percent >= DISK_WARNING_PERCENT) {
      found.push({ kind: 'disk_full', subject: d.mount, severity: d.usage_percent >= DISK_CRITICAL_PERCENT ? 'critical' : 'warning', value: d.usage_percent });
    }
  }
  if (snapshot.memory_percent !== null && snapshot.memory_percent >= BUSY_PERCENT) {
    found.push({ kind: 'memory_high', subject: 'memory', severity: 'warning', value: snapshot.memory_percent });
  }
  if (snapshot.cpu_percent !== null && snapshot.cpu_percent >= BUSY_PERCENT)
    found.push({ kind: 'cpu_high', subject: 'cpu', severity: 'warning', value: snapshot.cpu_percent });
  if (snapshot.zombies) found.push({ kind: 'zombie_processes', subject: 'processes', severity: 'warning', value: snapshot.zombies });
  return found.sort((a, b) => Number(b.severity === 'critical') - Number(a.severity === 'critical'));
}

/** The fleetmesh tool to run next for each finding, once per tool and arguments. */
export function suggestActions(host: string, attention: Attention[], changes: NotableChange[]): SuggestedAction[] {
  const suggestions: SuggestedAction[] = [];
  const add = (tool: string, args: SuggestedAction['arguments'], reason: string) => {
    const key = JSON.stringify([tool, args]);
    if (!suggestions.some((s) => JSON.stringify([s.tool, s.arguments]) === key)) suggestions.push({ tool, arguments: args, reason });
  };
  for (const item of attention) {
    if (item.kind.startsWith('container_')) add('docker_logs', { host, name: item.subject }, `read why container ${item.subject} is ${item.kind.slice(10)}`);
    else if (item.kind === 'disk_full') add('alerts', { host }, `disk ${item.subject} is filling up`);
    else if (item.kind === 'memory_high') add('processes', { host, sort_by: 'mem' }, 'find what holds the memory');
    else if (item.kind === 'cpu_high') add('processes', { host, sort_by: 'cpu' }, 'find what uses the CPU');
    else add('processes', { host }, 'find the parents of the zombie processes');
  }
  for (const item of changes) {
    if (item.kind === 'container_gone') add('docker_list', { name: item.subject }, `find out whether container ${item.subject} runs elsewhere now`);
    else if (item.kind === 'container_replaced' || item.kind === 'image_changed')
      add('docker_inspect', { host, name: item.subject }, `check the new ${item.subject}`);
    else if (item.kind === 'section_skipped' && item.after === 'not collected')
      add('agent_info', { host }, `see why the ${item.subject} collector did not answer`);
  }
  return suggestions;
}
