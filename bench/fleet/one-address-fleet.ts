import type { AdmissionLimits } from '../../broker/grpc/admission-gate.ts';

/**
 * The admission limits for a bench's simulated fleet. Every simulated agent
 * dials from 127.0.0.1, where a real fleet's hosts dial from as many
 * addresses: the limits of one source address would hold the simulated fleet
 * back past 2,048 agents as they hold a flood from one address, so each agent
 * counts as its own source.
 */
export function oneAddressFleetLimits(limits: AdmissionLimits): AdmissionLimits {
  return {
    ...limits,
    pendingPerSource: limits.pendingTotal,
    unfinishedPerSource: { burst: limits.pendingTotal, perMinute: limits.pendingTotal * 60 },
  };
}
