import { networkDomain } from '../../shared/domains/network/network-domain.ts';
import { parseWakeTargets, type WakeTarget } from '../wake/wake-targets.ts';
import { defineBrokerService } from './broker-service.ts';

/** The machines wake knows by name (--wake-target). */
export const wakeService = defineBrokerService({
  name: 'wake',
  domain: networkDomain,
  options: (flags) => parseWakeTargets(flags['wake-target']),
  defaults: [] as WakeTarget[],
  start: (targets) => ({ targets: targets as readonly WakeTarget[] }),
});
