import { FleetError } from '../../shared/errors/fleet-error.ts';
import { GrpcCode } from '../../shared/grpc/status-codes.ts';
import type { Logger } from '../../shared/log/logger.ts';
import { fullJitterDelayMs, sleep } from '../connection/backoff.ts';
import type { AgentIdentity } from '../identity/agent-identity.ts';

interface EnrollBackoff {
  baseMs: number;
  capMs: number;
  log: Logger;
}

/** Worth another attempt: no broker answered in time, the broker asked to be tried again later (its rate limit), or its store could not answer. */
function isTransient(error: unknown): boolean {
  if (!(error instanceof FleetError)) return false;
  return error.code === 'agent_offline' || error.code === 'unavailable' || error.details?.grpcCode === GrpcCode.RESOURCE_EXHAUSTED;
}

/**
 * Runs `enroll` (one attempt at every broker address) until it succeeds,
 * waiting with full-jitter backoff while the broker cannot be reached or asks
 * to be tried later: a host started before its broker, or one of fifty hosts
 * enrolling at once while the broker is busy, waits its turn rather than
 * exiting. A refusal (token, pin, name, a certificate that does not name the
 * address) is thrown at once.
 */
export async function enrollWithBackoff(enroll: () => Promise<AgentIdentity>, backoff: EnrollBackoff): Promise<AgentIdentity> {
  for (let failures = 1; ; failures += 1) {
    try {
      return await enroll();
    } catch (error) {
      if (!isTransient(error)) throw error;
      const delayMs = fullJitterDelayMs(failures, backoff.baseMs, backoff.capMs);
      backoff.log.warn('could not enroll yet; retrying', { reason: (error as FleetError).message, retry_in_ms: delayMs, attempt: failures });
      await sleep(delayMs);
    }
  }
}
