import type { DoctorPart, HostFinding } from '../domain-parts.ts';
import { serviceList } from './service-actions.ts';

/** More failed units than this on one host make one finding that counts the rest. */
const MAX_LISTED = 10;

/** The doctor's check of a host's systemd: each failed unit is a warning, with the calls that say why and start it again. */
export const failedUnitsCheck: DoctorPart = {
  checks: ['failed_units'],
  categories: ['services'],
  async examine(host) {
    if (!host.collectors.some((collector) => collector.name === 'systemd' && collector.available)) return { ran: false, findings: [] };
    const answer = await host.run(serviceList, { state: 'failed' });
    if (!answer.payload) return { ran: true, findings: [], failed: ['systemd'] };
    const findings = answer.payload.units.slice(0, MAX_LISTED).map(
      (unit): HostFinding => ({
        check: 'failed_units',
        severity: 'warning',
        category: 'services',
        subject: unit.name,
        message: `systemd unit ${unit.name} has failed (${unit.sub_state})`,
        action: `service_status with name ${unit.name} shows why (its last journal lines); service_restart starts it again.`,
        attention: { tool: 'service_status', arguments: { name: unit.name } },
      }),
    );
    const more = answer.payload.units.length - MAX_LISTED;
    if (more > 0) {
      findings.push({
        check: 'failed_units',
        severity: 'warning',
        category: 'services',
        subject: `${more} more units`,
        message: `${more} more systemd units have failed`,
        action: 'service_list with state failed lists them all.',
      });
    }
    return { ran: true, findings };
  },
};
