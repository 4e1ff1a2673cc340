import type { ActionOutput } from '../../../shared/catalog/action.ts';
import { agentInfo } from '../../../shared/domains/agent/agent-actions.ts';
import type { report } from '../../../shared/domains/checkup/report-action.ts';
import { dockerList } from '../../../shared/domains/docker/docker-actions.ts';
import type { CheckedHost } from '../../../shared/domains/domain-parts.ts';
import { DOCTOR_PARTS } from '../../../shared/domains/parts.ts';
import { reachableSockets } from '../../../shared/domains/system/reachable-sockets.ts';
import { openPorts, processes, systemStatus } from '../../../shared/domains/system/system-actions.ts';
import type { ActionHandler } from '../../dispatcher/dispatcher.ts';
import type { LocalCalls } from '../../dispatcher/local-calls.ts';
import type { HostSnapshot, SnapshotSection } from './host-snapshot.ts';
import { anythingChanged, compareSnapshots, needsAttention, suggestActions } from './snapshot-compare.ts';
import type { SnapshotStore } from './snapshot-store.ts';

const DEFAULT_KEEP = 30;

type ContainerRow = ActionOutput<typeof dockerList>['containers'][number];

function publishedPorts(container: ContainerRow): string[] {
  return container.ports
    .filter((port) => port.public_port !== null)
    .map((port) => `${port.ip ?? '0.0.0.0'}:${port.public_port}->${port.private_port}/${port.protocol}`)
    .sort();
}

/** report: reads the host through its own actions, compares with the previous snapshot, saves this one unless no_save. */
export function createReportHandler(calls: LocalCalls, store: SnapshotStore): ActionHandler<typeof report> {
  return async (params, context) => {
    const [info, status, containers, ports, procs] = await Promise.all([
      calls.run(agentInfo, {}, context),
      calls.run(systemStatus, {}, context),
      calls.run(dockerList, { all: true }, context),
      calls.run(openPorts, {}, context),
      calls.run(processes, { limit: 1 }, context),
    ]);
    const failed = new Set<SnapshotSection | 'system'>();
    // A host without an engine has no containers: an empty section, not a skipped one.
    const dockerAbsent = !containers.payload && containers.absentCollectors.includes('docker');
    if (!containers.payload && !dockerAbsent) failed.add('docker');
    if (!ports.payload) failed.add('ports');
    if (!procs.payload) failed.add('processes');
    if (!status.payload) failed.add('disks');
    const now = Date.now();
    const snapshot: HostSnapshot = {
      schema_version: 1,
      taken_at_unix_ms: now,
      containers: dockerAbsent
        ? []
        : (containers.payload?.containers.map((c) => ({
            id: c.id,
            name: c.name,
            image: c.image,
            state: c.state,
            health: c.health,
            restart_count: c.restart_count,
            ports: publishedPorts(c),
          })) ?? null),
      listening: ports.payload
        ? reachableSockets(ports.payload.ports)
            .map((p) => `${p.protocol} ${p.address}:${p.port}`)
            .sort()
        : null,
      disks: status.payload?.disks.map((d) => ({ mount: d.mount, usage_percent: d.usage_percent })) ?? null,
      zombies: procs.payload?.zombies.length ?? null,
      cpu_percent: status.payload?.cpu.usage_percent ?? null,
      memory_percent: status.payload?.memory.usage_percent ?? null,
    };
    const previous = store.latest();
    const changes = compareSnapshots(previous, snapshot);
    const attention = needsAttention(snapshot, previous);
    const host = info.payload?.name ?? '';
    const suggested = host ? suggestActions(host, attention, changes) : [];
    // What the domains' doctor checks say needs attention now (a failed unit), with the call to run next.
    if (info.payload) {
      const checked: CheckedHost = {
        facts: info.payload.facts,
        collectors: info.payload.collectors,
        run: (action, input) => calls.run(action, input, context),
      };
      for (const examined of await Promise.all(DOCTOR_PARTS.map((part) => part.examine(checked)))) {
        for (const finding of examined.findings) {
          if (!finding.attention || finding.severity === 'info') continue;
          attention.push({ kind: finding.check as (typeof attention)[number]['kind'], subject: finding.subject, severity: finding.severity, value: null });
          if (host) suggested.push({ tool: finding.attention.tool, arguments: { host, ...finding.attention.arguments }, reason: finding.message });
        }
      }
    }
    const save = params.no_save !== true;
    const kept = save ? store.save(snapshot, params.keep ?? DEFAULT_KEEP) : store.count();
    const running = dockerAbsent ? null : (snapshot.containers?.filter((c) => c.state === 'running').length ?? null);
    return {
      payload: {
        schema_version: 1,
        status: attention.some((a) => a.severity === 'critical') ? 'critical' : attention.length ? 'warning' : 'ok',
        changed: anythingChanged(changes),
        needs_attention: attention,
        notable_changes: changes,
        suggested_actions: suggested,
        containers_running: running,
        containers_total: dockerAbsent ? null : (snapshot.containers?.length ?? null),
        previous_at_unix_ms: previous?.taken_at_unix_ms ?? null,
        saved: save,
        snapshots_kept: kept,
        sampled_at_unix_ms: now,
      },
      failedCollectors: [...failed],
      absentCollectors: [...new Set([containers, ports, procs, status].flatMap((answer) => answer.absentCollectors))],
      errors: [dockerAbsent ? undefined : containers, ports, procs, status].flatMap((answer) => (!answer || answer.payload ? [] : answer.errors.slice(0, 1))),
    };
  };
}
