import { FleetError } from '../../shared/errors/fleet-error.ts';

/** Marks the error a call is cancelled with when its broker stops under it. */
const OUTCOME_UNKNOWN = 'unknown';

/**
 * Why a call still running was cancelled when its broker's stop grace ended:
 * its agents were told to stop, but a change may have been made already, so
 * the caller hears that the outcome is unknown rather than that it failed.
 */
export function stopInterruption(tool: string): FleetError {
  return new FleetError('unavailable', `the broker stopped before ${tool} finished: the call was cancelled, and whether it took effect is unknown`, {
    hint: `Read the state of its targets before calling ${tool} again; the other brokers of a cluster, or this one once it is back, answer.`,
    details: { outcome: OUTCOME_UNKNOWN },
  });
}

/** The stop interruption a call's signal was aborted with, if that is why it was aborted. */
export function interruptionOf(signal: AbortSignal): FleetError | undefined {
  const reason: unknown = signal.aborted ? signal.reason : undefined;
  return reason instanceof FleetError && reason.details?.outcome === OUTCOME_UNKNOWN ? reason : undefined;
}
