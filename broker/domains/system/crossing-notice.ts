import type { AlertCrossing } from '../../../shared/domains/system/alert-crossing.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { Notice } from '../../index/notice.ts';

/** A host's figure over (or near) its threshold. */
export function crossingNotice(host: Host, crossing: AlertCrossing): Notice {
  const what = crossing.metric === 'disk' ? `disk ${crossing.mount ?? ''}`.trim() : crossing.metric;
  return {
    event: 'alert',
    severity: crossing.state === 'critical' ? 'critical' : 'warning',
    title: `fleetmesh: ${what} ${crossing.state} on ${host.name}`,
    text: `Agent "${host.name}": ${what} at ${crossing.value_percent}% (threshold ${crossing.threshold_percent}%), now ${crossing.state}.`,
    host: host.name,
    key: `alert:${host.id}:${crossing.metric}:${crossing.mount ?? ''}:${crossing.state}`,
    time_unix_ms: Date.now(),
    details: crossing,
  };
}
