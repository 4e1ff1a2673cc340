import { networkDomain } from '../../../shared/domains/network/network-domain.ts';
import { defineBrokerService } from '../../services/broker-service.ts';
import { parseWakeTargets, type WakeTarget } from './wake-targets.ts';

/** The machines wake knows by name (--wake-target). */
export const wakeService = defineBrokerService({
  name: 'wake',
  domain: networkDomain,
  options: (flags) => parseWakeTargets(flags['wake-target']),
  defaults: [] as WakeTarget[],
  start: (targets) => ({ targets: targets as readonly WakeTarget[] }),
});
