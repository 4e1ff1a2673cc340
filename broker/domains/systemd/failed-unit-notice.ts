import type { ServiceInventory } from '../../../shared/domains/systemd/service-inventory.ts';
import type { Host } from '../../agents/agent-registry.ts';
import type { Notice } from '../../index/notice.ts';

/** A unit of a host that failed: an alert, as a figure over its threshold is (the unit's name is the host's words, quoted). */
export function failedUnitNotice(host: Host, unit: ServiceInventory['units'][number]): Notice {
  const since = unit.since_unix_ms ? ` at ${new Date(unit.since_unix_ms).toISOString()}` : '';
  return {
    event: 'alert',
    severity: 'warning',
    title: `fleetmesh: unit "${unit.name}" failed on ${host.name}`,
    text: `Agent "${host.name}": systemd unit "${unit.name}" failed${since} (${unit.sub_state}). service_status with its name says why; service_restart starts it again.`,
    host: host.name,
    key: `alert:${host.id}:unit:${unit.name}:failed`,
    time_unix_ms: Date.now(),
    details: unit,
  };
}
