import { mayRead } from '../../auth/visibility.ts';
import type { BrokerActionContext } from '../../calls/broker-action.ts';
import type { Finding } from '../broker-domain.ts';
import { UNIT, UnitIndexer } from './unit-indexer.ts';

/** get_recommendations: each failed unit the caller may see, from what the agents last reported. */
export async function failedUnitFindings(context: BrokerActionContext): Promise<Finding[]> {
  const hosts = new Map(context.visibleHosts().map((host) => [host.id, host]));
  return context.index
    .indexer(UnitIndexer)
    .failed()
    .flatMap(([hostId, units]) => {
      const host = hosts.get(hostId);
      if (!host) return [];
      return units
        .filter((unit) => mayRead(context.identity, { type: UNIT, name: unit.name, host: host.name }))
        .map(
          (unit): Finding => ({
            severity: 'warning',
            category: 'failed-unit',
            target: { type: UNIT, id: `${host.name}/${unit.name}`, name: `${host.name}/${unit.name}` },
            rationale: `systemd unit ${unit.name} on ${host.name} has failed (${unit.sub_state})${
              unit.since_unix_ms ? ` since ${new Date(unit.since_unix_ms).toISOString()}` : ''
            }: service_status with host ${host.name} and name ${unit.name} shows its last journal lines.`,
            fix: { tool: 'service_restart' },
          }),
        );
    });
}
