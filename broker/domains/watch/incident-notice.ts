import type { Incident } from '../../../shared/domains/watch/watch-incident.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { Notice } from '../../index/notice.ts';

/** An incident as a notice: the container and host quoted, the analysis and the last lines before the crash. */
export function incidentNotice(host: Host, incident: Incident): Notice {
  const lastLines = incident.logs_before.slice(-5).map((line) => `> ${line.text}`);
  return {
    event: 'incident',
    severity: incident.flapping || incident.oom_killed ? 'critical' : 'warning',
    title: `fleetmesh: container "${incident.container}" restarted on ${host.name}`,
    text: [
      `Container "${incident.container}" on agent "${host.name}" restarted (restart count ${incident.restart_count}): ${incident.analysis}.`,
      ...lastLines,
    ].join('\n'),
    host: host.name,
    key: `incident:${host.id}:${incident.container}`,
    time_unix_ms: Date.now(),
    details: incident,
  };
}
