import { fleetStatus } from '../../../shared/domains/fleet/fleet-actions.ts';
import { TRUST_CHECKS } from '../../../shared/domains/parts.ts';
import { assessClaims } from '../../agents/claims.ts';
import { mayRead } from '../../auth/visibility.ts';
import { defineBrokerAction } from '../../calls/broker-action.ts';

const DEFAULT_THRESHOLDS = { cpu_percent: 90, memory_percent: 85, disk_percent: 90 };
const CERT_WARNING_MS = 7 * 86_400_000;

/** The "start here" answer, from what heartbeats already told the broker: no fan-out. */
export const fleetStatusHandler = defineBrokerAction({
  action: fleetStatus,
  async run(params, context) {
    const thresholds = {
      cpu_percent: params.cpu_percent ?? DEFAULT_THRESHOLDS.cpu_percent,
      memory_percent: params.memory_percent ?? DEFAULT_THRESHOLDS.memory_percent,
      disk_percent: params.disk_percent ?? DEFAULT_THRESHOLDS.disk_percent,
    };
    const hosts = context.visibleHosts();
    const now = Date.now();
    const counts = { online: 0, stale: 0, offline: 0, total: hosts.length };
    const hot: { host: string; metric: 'cpu' | 'memory' | 'disk'; value_percent: number; threshold_percent: number; mount?: string }[] = [];
    const unavailable: { host: string; collector: string; reason: string }[] = [];
    // Absent collectors (nothing to collect on that host) are no failure: listed once per collector, with their hosts.
    const absent = new Map<string, { collector: string; hosts: string[]; reason: string }>();
    const notOnline: { host: string; state: 'stale' | 'offline'; since_unix_ms: number }[] = [];
    const expiring: { host: string; not_after_unix_ms: number }[] = [];
    const insecure: { host: string; what: string }[] = [];
    // A grant on some of a host's containers shows that the host is there and how it is connected, not what describes the host itself.
    const readable = new Set(hosts.filter((host) => mayRead(context.identity, { type: 'host', name: host.name })));
    const claims = assessClaims(context.registry.list(), context.index);
    const pendingClaims = hosts.flatMap((host) =>
      readable.has(host)
        ? (claims.get(host.id) ?? []).filter((c) => c.status === 'pending').map((c) => ({ host: host.name, role: c.role, object: c.object }))
        : [],
    );
    for (const host of hosts) {
      counts[host.state] += 1;
      if (host.state !== 'online') notOnline.push({ host: host.name, state: host.state, since_unix_ms: host.stateSince });
      if (host.certNotAfter !== null && host.certNotAfter - now < CERT_WARNING_MS) expiring.push({ host: host.name, not_after_unix_ms: host.certNotAfter });
      if (!readable.has(host)) continue;
      const sample = host.state === 'offline' ? null : host.sample;
      if (sample) {
        if (sample.cpu_percent !== null && sample.cpu_percent >= thresholds.cpu_percent) {
          hot.push({ host: host.name, metric: 'cpu', value_percent: sample.cpu_percent, threshold_percent: thresholds.cpu_percent });
        }
        if (sample.memory_percent !== null && sample.memory_percent >= thresholds.memory_percent) {
          hot.push({ host: host.name, metric: 'memory', value_percent: sample.memory_percent, threshold_percent: thresholds.memory_percent });
        }
        if (sample.disk_percent !== null && sample.disk_percent >= thresholds.disk_percent) {
          hot.push({
            host: host.name,
            metric: 'disk',
            value_percent: sample.disk_percent,
            threshold_percent: thresholds.disk_percent,
            ...(sample.disk_mount ? { mount: sample.disk_mount } : {}),
          });
        }
      }
      for (const collector of host.hello?.collectors ?? []) {
        if (collector.available) continue;
        if (!collector.absent) {
          unavailable.push({ host: host.name, collector: collector.name, reason: collector.reason });
          continue;
        }
        const entry = absent.get(collector.name) ?? { collector: collector.name, hosts: [], reason: collector.reason };
        entry.hosts.push(host.name);
        absent.set(collector.name, entry);
      }
      for (const check of TRUST_CHECKS) if (check.skipped(host.hello?.facts ?? {})) insecure.push({ host: host.name, what: check.summary });
    }
    return {
      healthy: counts.stale + counts.offline === 0 && hot.length === 0 && expiring.length === 0,
      counts,
      thresholds,
      hot_hosts: hot,
      unavailable_collectors: unavailable,
      absent_collectors: [...absent.values()].sort((a, b) => a.collector.localeCompare(b.collector)),
      not_online: notOnline,
      certificates_expiring: expiring,
      insecure,
      pending_claims: pendingClaims,
    };
  },
});
